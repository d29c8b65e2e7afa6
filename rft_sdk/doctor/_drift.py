"""Drift statistics between a reference sample (the dataset) and an actual one (production).

* **Population stability index** (PSI), for binned numbers and categories:
  ``PSI = Σ_i (a_i − e_i) · ln(a_i / e_i)`` over bins ``i``, with ``e_i`` the
  reference (expected) share and ``a_i`` the actual share, each floored at
  ``1e-4`` so an empty bin stays finite. Rule of thumb (Siddiqi, *Credit Risk
  Scorecards*, Wiley 2006; Yurdakul, "Statistical properties of the
  population stability index", 2018): < 0.1 no significant shift, 0.1–0.25
  moderate, > 0.25 significant. Numbers are binned at the reference deciles.
* **Kolmogorov–Smirnov statistic** ``D = sup_x |F_e(x) − F_a(x)|`` of the two
  empirical CDFs (reported beside PSI for numbers).
* **Jensen–Shannon distance** (base-2 logarithms, so in [0, 1]): the square
  root of ``JSD(P, Q) = ½ KL(P‖M) + ½ KL(Q‖M)``, ``M = ½(P + Q)`` (Lin, "Divergence
  measures based on the Shannon entropy", IEEE Trans. Inf. Theory 1991;
  Endres & Schindelin 2003 for the metric), for word distributions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

__all__ = ["PSI_FLOOR", "js_distance", "ks_statistic", "psi_categorical", "psi_numeric"]

PSI_FLOOR = 1e-4


def _psi(expected: np.ndarray, actual: np.ndarray) -> float:
    e = np.maximum(expected / max(expected.sum(), 1), PSI_FLOOR)
    a = np.maximum(actual / max(actual.sum(), 1), PSI_FLOOR)
    return float(np.sum((a - e) * np.log(a / e)))


def _bin(values: np.ndarray, cuts: np.ndarray, constant: bool) -> np.ndarray:
    if constant:  # below / equal to / above the reference's single value
        idx = np.where(values < cuts[0], 0, np.where(values > cuts[0], 2, 1))
        return np.bincount(idx, minlength=3).astype(float)
    return np.bincount(np.searchsorted(cuts, values, side="right"), minlength=len(cuts) + 1).astype(float)


def psi_numeric(expected: Sequence[float], actual: Sequence[float], bins: int = 10) -> float:
    """PSI of two samples of a number, binned at the reference (``expected``) deciles.

    Bins are open-ended at both ends (the usual scorecard practice) and cut at
    the reference's distinct interior quantiles; a constant reference gets
    three bins (below, equal to, above its value), so a shift still counts.

    Raises:
        ValueError: either sample is empty.
    """
    if not len(expected) or not len(actual):
        raise ValueError("PSI needs two non-empty samples")
    e = np.asarray(expected, dtype=float)
    constant = bool(e.min() == e.max())
    cuts = e[:1] if constant else np.unique(np.quantile(e, np.linspace(0, 1, bins + 1)[1:-1]))
    return _psi(_bin(e, cuts, constant), _bin(np.asarray(actual, dtype=float), cuts, constant))


def psi_categorical(expected: Iterable[Hashable], actual: Iterable[Hashable]) -> float:
    """PSI of two samples of a category (bins = the union of categories seen).

    Raises:
        ValueError: either sample is empty.
    """
    ce, ca = Counter(expected), Counter(actual)
    if not ce or not ca:
        raise ValueError("PSI needs two non-empty samples")
    keys = sorted(set(ce) | set(ca), key=str)
    return _psi(np.array([ce[k] for k in keys], float), np.array([ca[k] for k in keys], float))


def ks_statistic(expected: Sequence[float], actual: Sequence[float]) -> float:
    """Two-sample Kolmogorov–Smirnov ``D`` in [0, 1].

    Raises:
        ValueError: either sample is empty.
    """
    if not len(expected) or not len(actual):
        raise ValueError("KS needs two non-empty samples")
    e, a = np.sort(np.asarray(expected, float)), np.sort(np.asarray(actual, float))
    grid = np.concatenate([e, a])
    fe = np.searchsorted(e, grid, side="right") / len(e)
    fa = np.searchsorted(a, grid, side="right") / len(a)
    return float(np.max(np.abs(fe - fa)))


def js_distance(p: Counter[str], q: Counter[str]) -> float:
    """Jensen–Shannon distance (base 2) between two count distributions; 0 when both are empty."""
    keys = sorted(set(p) | set(q))
    if not keys:
        return 0.0
    pv = np.array([p[k] for k in keys], float)
    qv = np.array([q[k] for k in keys], float)
    if pv.sum() == 0 or qv.sum() == 0:
        return 1.0
    pv, qv = pv / pv.sum(), qv / qv.sum()
    m = (pv + qv) / 2

    def kl(x: np.ndarray) -> float:
        mask = x > 0
        return float(np.sum(x[mask] * np.log2(x[mask] / m[mask])))

    return float(np.sqrt(max(0.0, (kl(pv) + kl(qv)) / 2)))
