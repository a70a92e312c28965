"""Exact ranking metrics of binary scorers, with intervals and paired tests.

Every function takes the true labels first, as scikit-learn's do (0 / 1, -1 / +1 or bool), then
the scores (float64, read in place when contiguous; float32 and integers converted exactly;
lists and pandas Series through ``numpy.asarray``; torch tensors on any device, copied to the
host). An ``(n, 1)`` column (``model(x)``'s shape) is its ``n`` values, as in scikit-learn;
2-D arrays of shape ``(n, k)``, ``k > 1``, are ``k`` label columns (multi-label): each column gets its own figure and the result is an array (a list for the
intervals and tests). Ties count 1/2. Everything is ``O(n log n)`` and runs with the GIL
released; bad input raises ``ValueError`` or ``TypeError`` naming the argument.

- :func:`auc`, :func:`pauc` (normalized over FPR ``[a, b]``, McClish-standardized, raw),
  :func:`two_way_pauc` (LibAUC's), :func:`roc_curve`;
- :func:`delong_ci`, :func:`delong_test`: DeLong's interval of the AUC and paired test of two
  scorers (pROC's ``ci.auc`` / ``roc.test`` with ``method = "delong"``);
- :func:`bootstrap_ci`, :func:`bootstrap_test`: the seeded stratified bootstrap of the pAUC
  (pROC's ``method = "bootstrap"``, R's type-7 quantiles).
"""

from collections import namedtuple

import numpy as np

from . import _rankrisk

__all__ = [
    "Interval",
    "PairedTest",
    "auc",
    "pauc",
    "two_way_pauc",
    "roc_curve",
    "delong_ci",
    "delong_test",
    "bootstrap_ci",
    "bootstrap_test",
    "BOOTSTRAP_DRAWS",
]

#: The bootstrap's draws (each class's resample counts drawn in the score column's rank order,
#: block by block, from ChaCha8 streams seeded per resample): the name ``rankrisk metrics``
#: writes beside its intervals. Intervals made before 2026-11-29 (rankrisk 0.1.0 wheels built
#: earlier) came from draws in index order and differ within their Monte Carlo error.
BOOTSTRAP_DRAWS = _rankrisk.BOOTSTRAP_DRAWS

Interval = namedtuple("Interval", ["estimate", "lower", "upper"])
Interval.__doc__ = "An estimate with its two-sided confidence interval."

PairedTest = namedtuple("PairedTest", ["difference", "std_error", "z", "p_value"])
PairedTest.__doc__ = (
    "A paired comparison of two scorers on the same samples: the first statistic minus the "
    "second, its standard error, z = difference / std_error and the two-sided p-value."
)

_KINDS = ("normalized", "mcclish", "raw")


def _array(a):
    """``a`` as a NumPy array: arrays as they are, torch tensors from any device (detached,
    copied to the host), pandas Series and lists through ``numpy.asarray``; an ``(n, 1)``
    column (``model(x)``'s shape) as its ``n`` values, as scikit-learn takes it."""
    if not isinstance(a, np.ndarray):
        if hasattr(a, "detach") and hasattr(a, "cpu"):  # a torch tensor, on any device
            if str(a.dtype) == "torch.bfloat16":
                raise TypeError("a bfloat16 tensor has no NumPy dtype: pass t.float()")
            a = a.detach().cpu().numpy()
        else:
            a = np.asarray(a)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a.reshape(-1)
    return a


def _columns(fn, y_true, *scores, collect=np.array):
    """``fn(y, s...)`` on 1-D arrays (an ``(n, 1)`` column counts as one), or on each column
    of 2-D ones."""
    y_true = _array(y_true)
    scores = [_array(s) for s in scores]
    if all(s.ndim == 2 for s in scores) and y_true.ndim == 2:
        for s in scores:
            if s.shape != y_true.shape:
                raise ValueError(
                    f"y_true has shape {y_true.shape}, the scores {s.shape}: "
                    "multi-label columns need equal shapes"
                )
        return collect(
            [
                fn(
                    np.ascontiguousarray(y_true[:, k]),
                    *[np.ascontiguousarray(s[:, k]) for s in scores],
                )
                for k in range(y_true.shape[1])
            ]
        )
    return fn(y_true, *scores)


def _range(fpr):
    try:
        a, b = (float(v) for v in fpr)
    except (TypeError, ValueError):
        raise ValueError(f"fpr must be a pair (a, b) with 0 <= a < b <= 1, got {fpr!r}") from None
    return a, b


def auc(y_true, y_score):
    """The AUC: the share of (positive, negative) pairs ranked correctly, ties 1/2.

    Equal to ``sklearn.metrics.roc_auc_score``.
    """
    return _columns(lambda y, s: _rankrisk.pauc(y, s, 0.0, 1.0), y_true, y_score)


def pauc(y_true, y_score, fpr=(0.0, 1.0), kind="normalized"):
    """Partial AUC over the FPR range ``fpr = (a, b)``.

    ``kind``:

    - ``"normalized"`` (default): eq. (2) of the FPR-range pAUC paper, the pAUC divided by
      its largest value ``b - a``; 1 for a perfect scorer. Negatives at the range's two ends
      count by the share of them inside it.
    - ``"mcclish"``: McClish's standardization over ``[0, b]`` (``a`` must be 0), 1/2 for a
      random scorer; equal to ``sklearn.metrics.roc_auc_score(max_fpr=b)``.
    - ``"raw"``: the unnormalized area, ``(b - a)`` times the normalized one.
    """
    a, b = _range(fpr)
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    if kind == "mcclish":
        if a != 0.0:
            raise ValueError(f"the McClish pAUC is over FPR [0, b]: fpr must start at 0, got {a}")
        return _columns(lambda y, s: _rankrisk.mcclish(y, s, b), y_true, y_score)
    scale = (b - a) if kind == "raw" else 1.0
    return _columns(lambda y, s: scale * _rankrisk.pauc(y, s, a, b), y_true, y_score)


def two_way_pauc(y_true, y_score, max_fpr, min_tpr):
    """LibAUC's two-way partial AUC (TPR >= ``min_tpr``, FPR <= ``max_fpr``).

    The AUC of the ``max(1, round(N+ (1 - min_tpr)))`` lowest-scored positives against the
    ``max(1, round(N- max_fpr))`` highest-scored negatives, LibAUC 2.0.1's
    ``pauc_roc_score(max_fpr, min_tpr)`` to the last bit, and defined at every boundary:
    ``max_fpr = 1`` and ``min_tpr = 0`` included (``0 <= min_tpr < 1``, ``0 < max_fpr <= 1``).
    """
    return _columns(
        lambda y, s: _rankrisk.two_way(y, s, float(max_fpr), float(min_tpr)), y_true, y_score
    )


def roc_curve(y_true, y_score):
    """The ROC curve ``(fpr, tpr, thresholds)``: from (0, 0) at threshold ``+inf`` to (1, 1),
    one point per distinct score (a sample is predicted positive when its score is
    ``>= threshold``). 1-D input (or an ``(n, 1)`` column) only."""
    return _rankrisk.roc(_array(y_true), _array(y_score))


def delong_ci(y_true, y_score, level=0.95):
    """The AUC with DeLong's interval at coverage ``level``: ``Interval(auc, lower, upper)``,
    clipped to [0, 1] (pROC's ``ci.auc(method = "delong")``)."""
    return _columns(
        lambda y, s: Interval(*_rankrisk.delong_ci(y, s, float(level))),
        y_true,
        y_score,
        collect=list,
    )


def delong_test(y_true, score_a, score_b):
    """DeLong's paired test of two scorers' AUCs on the same samples:
    ``PairedTest(difference, std_error, z, p_value)`` (pROC's ``roc.test(method = "delong")``)."""
    return _columns(
        lambda y, a, b: PairedTest(*_rankrisk.delong_test(y, a, b)),
        y_true,
        score_a,
        score_b,
        collect=list,
    )


def bootstrap_ci(y_true, y_score, fpr=(0.0, 1.0), resamples=2000, seed=0, level=0.95):
    """The normalized pAUC over ``fpr`` with a stratified bootstrap interval:
    ``Interval(pauc, lower, upper)`` from ``resamples`` resamples drawn within each class with
    seed ``seed`` (pROC's ``ci(method = "bootstrap")``; the same draws,
    :data:`BOOTSTRAP_DRAWS`, as ``rankrisk metrics --resamples R --seed S``)."""
    a, b = _range(fpr)
    return _columns(
        lambda y, s: Interval(
            *_rankrisk.bootstrap_ci(y, s, a, b, int(resamples), int(seed), float(level))
        ),
        y_true,
        y_score,
        collect=list,
    )


def bootstrap_test(y_true, score_a, score_b, fpr=(0.0, 1.0), resamples=2000, seed=0):
    """The paired stratified bootstrap test of two scorers' normalized pAUCs over ``fpr``:
    ``PairedTest(difference, std_error, z, p_value)`` (pROC's ``roc.test(method =
    "bootstrap")``)."""
    a, b = _range(fpr)
    return _columns(
        lambda y, s1, s2: PairedTest(
            *_rankrisk.bootstrap_test(y, s1, s2, a, b, int(resamples), int(seed))
        ),
        y_true,
        score_a,
        score_b,
        collect=list,
    )
