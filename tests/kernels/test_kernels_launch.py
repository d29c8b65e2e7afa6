"""Launch table: the documented defaults per pass / V / dtype, the interpreter's blocks, and overrides."""

import pytest

from rft_sdk.kernels._launch import launch_config, next_power_of_2


@pytest.mark.parametrize("vocab, size, pass_, expected", [
    (151_936, 2, "forward", (2048, 1, 4)),
    (151_936, 4, "forward", (1024, 1, 4)),
    (151_936, 2, "backward", (4096, 8, 2)),
    (151_936, 4, "backward", (2048, 8, 2)),
    (3_000, 2, "forward", (4096, 4, 2)),  # small V: one block per row
    (257, 4, "backward", (512, 4, 2)),
])
def test_gpu_table(monkeypatch, vocab, size, pass_, expected):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert launch_config(vocab, size, pass_) == expected


def test_interpreter_uses_one_big_block_and_overrides_win():
    assert launch_config(151_936, 2, "forward") == (65536, 4, 1)  # conftest sets TRITON_INTERPRET=1
    assert launch_config(1003, 2, "backward") == (1024, 4, 1)
    assert launch_config(151_936, 2, "forward", block_v=256, num_warps=2)[:2] == (256, 2)
    assert [next_power_of_2(n) for n in (0, 1, 2, 3, 1024, 1025)] == [1, 1, 2, 4, 1024, 2048]


@pytest.mark.parametrize("kw", [dict(block_v=3), dict(block_v=0), dict(num_warps=3), dict(pass_="sideways")])
def test_bad_launch_arguments_raise(kw):
    args = dict(vocab=100, element_size=2, pass_="forward") | kw
    with pytest.raises(ValueError):
        launch_config(**args)
