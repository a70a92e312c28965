"""rankrisk: rank-based risks and partial-AUC objectives, from Python.

The package wraps rankrisk's Rust core (``rankrisk-core``; no deep-learning framework in it):

- :mod:`rankrisk.metrics`: AUC, pAUC over an FPR range (normalized, McClish, raw), LibAUC's
  two-way pAUC, ROC curves, DeLong intervals and the paired DeLong test, seeded stratified
  bootstrap intervals and tests, all ``O(n log n)`` with the GIL released;
- :mod:`rankrisk.linear` (needs scikit-learn): :class:`~rankrisk.linear.RankRiskClassifier`,
  the rank-based risks by ADMM, and :class:`~rankrisk.linear.PartialAUCClassifier`, the pAUC
  over an FPR range by AGD-SBCD, as scikit-learn estimators;
- :mod:`rankrisk.torch` (needs torch): the per-batch objectives (SOPA, SOPA-s, SOTA-s, STACO,
  PAUCI, UPAUCI, AUC-M, mini-batch pAUC, the deep ADMM with its outer step) as PyTorch
  losses, their state in Rust, in ``state_dict``.
"""

from . import metrics
from ._rankrisk import __version__

__all__ = ["metrics", "__version__"]
