"""``sft_train``: the loss-targeted early stop and its argument checks."""

from __future__ import annotations

import pytest
import torch

from rft_sdk.train import TrainConfig
from rft_sdk.train._model import TinyGPT, TinyGPTConfig
from rft_sdk.train._sft import TARGET_WINDOW, sft_train

PAIRS = [([1, 5, 6, 7], [8, 9, 10, 2]), ([1, 5, 6, 11], [12, 13, 14, 2])]


def _model() -> TinyGPT:
    torch.manual_seed(0)
    return TinyGPT(TinyGPTConfig(vocab_size=16, block_size=16, n_layer=1, n_head=2, n_embd=16))


def test_target_loss_stops_once_the_window_mean_reaches_it() -> None:
    full = sft_train(_model(), PAIRS, steps=80, batch_size=4, lr=1e-2, seed=0)
    target = (full[0] + full[-1]) / 2  # reached part-way through the full run
    losses = sft_train(_model(), PAIRS, steps=80, batch_size=4, lr=1e-2, seed=0, target_loss=target)
    assert TARGET_WINDOW <= len(losses) < len(full)
    assert losses == full[: len(losses)]  # same seed, same steps until the stop
    assert sum(losses[-TARGET_WINDOW:]) / TARGET_WINDOW <= target
    before = losses[:-1][-TARGET_WINDOW:]
    assert sum(before) / len(before) > target or len(losses) == TARGET_WINDOW  # it stopped at the first step that met it


def test_target_loss_never_met_runs_every_step() -> None:
    assert len(sft_train(_model(), PAIRS, steps=15, batch_size=2, lr=1e-3, seed=0, target_loss=0.0)) == 15


@pytest.mark.parametrize("kwargs", [{"target_loss": -0.1}, {"steps": 0}, {"batch_size": 0}])
def test_bad_arguments_raise(kwargs: dict) -> None:
    args = {"steps": 5, "batch_size": 2, "lr": 1e-3, "seed": 0, **kwargs}
    with pytest.raises(ValueError):
        sft_train(_model(), PAIRS, **args)


def test_config_rejects_a_negative_target() -> None:
    with pytest.raises(ValueError, match="sft_target_loss"):
        TrainConfig(sft_target_loss=-1.0)
