"""scikit-learn estimators on rankrisk's certified linear solvers.

:class:`RankRiskClassifier` minimizes a rank-based risk (eq. (1) of the rank-based paper,
``sum_i sigma_i l(-y_i x_i^T w) + g(w)`` over the sorted losses: ERM, CVaR, extremile, ESRM,
top-k, AoRR, EHRM / CPT) with the individual losses and regularizers of ``rankrisk
fit-linear``, by proximal ADMM with the refined PAVA z-step (Algorithm 1) or sADMM: the same
solver, the same optimum. :class:`PartialAUCClassifier` maximizes the pAUC over an FPR range
(eq. (3) of the FPR-range pAUC paper) by AGD-SBCD or the paper's baselines, as ``rankrisk
fit-pauc`` does. scikit-learn is needed for this module (``pip install
./python[sklearn]``).
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from . import _rankrisk

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    def _validate_data(estimator, *args, **kwargs):
        return estimator._validate_data(*args, **kwargs)

__all__ = ["RankRiskClassifier", "PartialAUCClassifier"]


class RankRiskClassifier(ClassifierMixin, BaseEstimator):
    """A linear binary classifier trained on a rank-based risk by ADMM.

    Parameters
    ----------
    objective : str, default="erm"
        The weights ``sigma`` of the sorted losses, as ``rankrisk fit-linear --objective``
        takes them: ``erm``, ``cvar:q=0.8``, ``extremile:r=2``, ``esrm:rho=1``, ``topk:k=..``,
        ``aorr:m=..,k=..``, ``ehrm:a=..,b=..``, ``cpt:gamma=0.61,delta=0.69,b=..``.
    loss : str, default="logistic"
        The individual loss of the margin: ``logistic``, ``hinge``, ``exponential``,
        ``sqhinge``, ``smooth-hinge:delta=D``.
    reg : str, default="l2:0.01"
        The regularizer ``g``: ``none``, ``l2:MU`` (``MU/2 ||w||^2``), ``l1:MU``,
        ``enet:L1,L2``, ``mcp:L,T``, ``scad:L,A``.
    solver : {"admm", "sadmm"}, default="admm"
        Algorithm 1, or sADMM (``g`` replaced by its Moreau envelope).
    rho : str or None, default=None
        The penalty schedule (``fixed:R``, ``srm``, ``aorr``, ``ehrm``, ``adaptive``, ...);
        None picks the solver's default for the objective.
    max_iter : int, default=10000
        Iteration cap; a run that stops on it warns with ``ConvergenceWarning``.
    tol : float, default=1e-6
        Relative tolerance: of the certified duality gap where one applies (convex
        objectives with l1, l2 or elastic net), else of the primal and dual residuals.
    fit_intercept : bool, default=True
        Append a constant feature (its weight is regularized with the others, as
        ``fit-linear --intercept`` does).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; the second is the positive class.
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    objective_ : float
        Eq. (1) at the solution (the regularizer included, on the intercept too).
    n_iter_ : int
    converged_ : bool
    gap_ : float or None
        The certified relative duality gap ``(P(w) - bound) / P(w)``, an upper bound of the
        relative distance to the optimum; None where no certificate applies.
    """

    def __init__(
        self,
        objective="erm",
        loss="logistic",
        reg="l2:0.01",
        solver="admm",
        rho=None,
        max_iter=10000,
        tol=1e-6,
        fit_intercept=True,
    ):
        self.objective = objective
        self.loss = loss
        self.reg = reg
        self.solver = solver
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _design(self, X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        if self.fit_intercept:
            X = np.ascontiguousarray(np.hstack([X, np.ones((X.shape[0], 1))]))
        return X

    def fit(self, X, y):
        """Fit on features ``X`` (n, d) and binary labels ``y``; returns ``self``."""
        X, y = _validate_data(self, X, y, dtype=np.float64)
        self.classes_, signs = _binary(y)
        out = _rankrisk.fit_rank_risk(
            self._design(X),
            signs,
            str(self.objective),
            str(self.loss),
            str(self.reg),
            str(self.solver),
            None if self.rho is None else str(self.rho),
            int(self.max_iter),
            float(self.tol),
        )
        w = np.asarray(out["w"])
        d = X.shape[1]
        self.coef_ = w[:d].reshape(1, d)
        self.intercept_ = np.array([w[d] if self.fit_intercept else 0.0])
        self.objective_ = out["objective"]
        self.n_iter_ = out["iterations"]
        self.converged_ = out["converged"]
        self.gap_ = out["gap"]
        if not self.converged_:
            warnings.warn(
                f"ADMM stopped at max_iter={self.max_iter} before reaching tol={self.tol} "
                f"(relative residuals {out['primal_residual']:.3g} / "
                f"{out['dual_residual']:.3g}, gap {self.gap_})",
                ConvergenceWarning,
            )
        return self

    def decision_function(self, X):
        """The linear scores ``X w + b`` (positive for the second class)."""
        check_is_fitted(self)
        X = _validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """The class of each row: the second class where the score is positive."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class PartialAUCClassifier(ClassifierMixin, BaseEstimator):
    """A linear scorer trained on the pAUC over an FPR range by AGD-SBCD.

    Minimizes eq. (3) of the FPR-range pAUC paper, the pairwise surrogate averaged over the
    negatives ranked between ``alpha N-`` and ``beta N-`` for each positive, by AGD-SBCD
    (Algorithms 1-2; Appendix E.2's schedules) or one of the paper's baselines, from ``w = 0``,
    as ``rankrisk fit-pauc`` runs them (its defaults, which suit standardized features). The
    pAUC does not see a constant shift, so the model has no intercept.

    Parameters
    ----------
    fpr : (float, float), default=(0.05, 0.5)
        The FPR range ``(alpha, beta)``, ``0 <= alpha < beta <= 1``.
    surrogate : {"logistic", "sqhinge"}, default="logistic"
    solver : {"agd-sbcd", "dca", "prox-dca", "mb", "subgrad"}, default="agd-sbcd"
    epochs : int, default=15
        Outer iterations ``K`` (AGD-SBCD, DCA), epochs (``mb``, ``subgrad``).
    budget_epochs : float or None, default=None
        Passes over the data instead of ``epochs``, for equal-budget comparisons.
    c : float, default=10.0
        Step constant (``eta = c / ((k+1) N+ N-)``; ``eta0`` of ``mb`` / ``subgrad``).
    t_scale : int, default=20
        ``T_k = t_scale (k+1)^2`` inner steps.
    mu_scale, gamma_scale : float, default=1.0, 2.0
        ``mu = mu_scale / (N+ N-)``, ``gamma = gamma_scale / (N+ N-)``.
    batch : (int, int), default=(100, 100)
        Positives and negatives per step ``(I, J)``.
    random_state : int, default=0
        Seed of the block sampler.
    c_dual : float or None, default=None
        ``theta = c_dual / ((k+1) N-)``; None uses ``c``.
    dual_init : {"exact", "mean"}, default="exact"
    dual_refresh, common_blocks : bool, default=False
    prox_l : float, default=1e-3
        Proximal DCA's ``L``.

    Attributes
    ----------
    classes_, coef_, intercept_ (zero)
    history_ : list of (epochs, objective, train_pauc)
        One row per outer iteration (per epoch for ``mb`` / ``subgrad``).
    objective_ : float
        Eq. (3) at the returned ``w``; ``train_pauc_`` its normalized training pAUC.
    n_iter_ : int
    """

    def __init__(
        self,
        fpr=(0.05, 0.5),
        surrogate="logistic",
        solver="agd-sbcd",
        epochs=15,
        budget_epochs=None,
        c=10.0,
        t_scale=20,
        mu_scale=1.0,
        gamma_scale=2.0,
        batch=(100, 100),
        random_state=0,
        c_dual=None,
        dual_init="exact",
        dual_refresh=False,
        common_blocks=False,
        prox_l=1e-3,
    ):
        self.fpr = fpr
        self.surrogate = surrogate
        self.solver = solver
        self.epochs = epochs
        self.budget_epochs = budget_epochs
        self.c = c
        self.t_scale = t_scale
        self.mu_scale = mu_scale
        self.gamma_scale = gamma_scale
        self.batch = batch
        self.random_state = random_state
        self.c_dual = c_dual
        self.dual_init = dual_init
        self.dual_refresh = dual_refresh
        self.common_blocks = common_blocks
        self.prox_l = prox_l

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit on features ``X`` (n, d) and binary labels ``y``; returns ``self``."""
        X, y = _validate_data(self, X, y, dtype=np.float64)
        self.classes_, signs = _binary(y)
        alpha, beta = (float(v) for v in self.fpr)
        i, j = (int(v) for v in self.batch)
        out = _rankrisk.fit_pauc(
            np.ascontiguousarray(X),
            signs,
            alpha,
            beta,
            str(self.surrogate),
            str(self.solver),
            int(self.epochs),
            None if self.budget_epochs is None else float(self.budget_epochs),
            float(self.c),
            int(self.t_scale),
            float(self.mu_scale),
            float(self.gamma_scale),
            i,
            j,
            int(self.random_state),
            None if self.c_dual is None else float(self.c_dual),
            str(self.dual_init),
            bool(self.dual_refresh),
            bool(self.common_blocks),
            float(self.prox_l),
        )
        self.coef_ = np.asarray(out["w"]).reshape(1, X.shape[1])
        self.intercept_ = np.zeros(1)
        self.history_ = [tuple(r) for r in out["history"]]
        self.n_iter_ = len(self.history_)
        last = self.history_[-1] if self.history_ else (0.0, float("nan"), float("nan"))
        self.objective_, self.train_pauc_ = last[1], last[2]
        return self

    def decision_function(self, X):
        """The linear scores ``X w`` (higher ranks as the second class)."""
        check_is_fitted(self)
        X = _validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_[0]

    def predict(self, X):
        """The second class where the score is positive (a pAUC model ranks; pick a
        threshold on ``decision_function`` for an operating point)."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def _binary(y):
    """The two classes of ``y`` and its labels as +1 (the second class) / -1."""
    check_classification_targets(y)
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(
            "Only binary classification is supported: the objective ranks two classes, and "
            f"y is {y_type} ({np.unique(y).tolist()[:5]})"
        )
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"y has only one class ({classes.tolist()}): the objective ranks positives "
            "against negatives and needs both classes"
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)
