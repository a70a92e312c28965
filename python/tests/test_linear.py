"""rankrisk.linear.RankRiskClassifier: the CLI's optimum, scikit-learn's estimator contract."""

import json
import subprocess
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from rankrisk import metrics
from rankrisk.linear import PartialAUCClassifier, RankRiskClassifier


def task(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def train_file(tmp_path, X, y):
    csv = tmp_path / "train.csv"
    rows = "\n".join(",".join(repr(float(v)) for v in row) + f",{2 * t - 1}" for row, t in zip(X, y))
    csv.write_text(rows + "\n")
    return csv


def test_the_optimum_equals_the_command_lines(tmp_path, cli):
    X, y = task()
    csv = train_file(tmp_path, X, y)
    for objective, loss, reg in [
        ("cvar:q=0.7", "logistic", "l2:0.01"),
        ("erm", "hinge", "l1:0.01"),
        ("topk:k=50", "logistic", "enet:0.01,0.01"),
    ]:
        out = tmp_path / "fit.json"
        subprocess.run(
            [cli, "fit-linear", "--train-file", str(csv), "--objective", objective, "--loss",
             loss, "--reg", reg, "--solver", "admm", "--json", str(out)],
            check=True,
            capture_output=True,
        )
        report = json.loads(out.read_text())
        est = RankRiskClassifier(objective=objective, loss=loss, reg=reg, fit_intercept=False)
        est.fit(X, y)
        assert est.objective_ == report["objective"]
        assert est.coef_[0].tolist() == report["w"]
        assert est.n_iter_ == report["iterations"]


def test_the_pauc_solvers_equal_the_command_lines(tmp_path, cli):
    X, y = task(n=300, seed=5)
    csv = train_file(tmp_path, X, y)
    for solver in ("agd-sbcd", "mb"):
        out = tmp_path / "fit.json"
        subprocess.run(
            [cli, "fit-pauc", "--train-file", str(csv), "--solver", solver, "--fpr",
             "0.05,0.5", "--epochs", "4", "--json", str(out)],
            check=True,
            capture_output=True,
        )
        report = json.loads(out.read_text())
        est = PartialAUCClassifier(solver=solver, epochs=4).fit(X, y)
        assert est.coef_[0].tolist() == report["w"]
        assert est.objective_ == report["objective"]
        assert est.train_pauc_ == report["train_pauc"]
        assert est.train_pauc_ == metrics.pauc(y, est.decision_function(X), fpr=(0.05, 0.5))


def test_fit_predict_and_the_certificate():
    X, y = task(seed=1)
    est = RankRiskClassifier(objective="cvar:q=0.5").fit(X, y)
    assert est.converged_ and est.gap_ is not None and est.gap_ <= 1e-6
    assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)
    assert (est.predict(X) == y).mean() > 0.8
    scores = est.decision_function(X)
    assert np.allclose(scores, X @ est.coef_[0] + est.intercept_[0])
    # Labels of any two values: the second sorted one is the positive class.
    named = np.where(y == 1, "sick", "healthy")
    est2 = RankRiskClassifier(objective="cvar:q=0.5").fit(X, named)
    assert list(est2.classes_) == ["healthy", "sick"]
    assert np.array_equal(est2.coef_, est.coef_)


def test_a_capped_run_warns():
    X, y = task(seed=2)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        RankRiskClassifier(max_iter=3).fit(X, y)


def test_bad_settings_name_themselves():
    X, y = task(seed=3)
    for kwargs, words in [
        ({"objective": "cvar:q=2"}, "objective"),
        ({"loss": "nope"}, "loss"),
        ({"reg": "l2:-1"}, "reg"),
        ({"solver": "sgd"}, "solver"),
    ]:
        with pytest.raises(ValueError, match=words):
            RankRiskClassifier(**kwargs).fit(X, y)
    with pytest.raises(ValueError, match="Only binary classification"):
        RankRiskClassifier().fit(X, np.arange(len(y)) % 3)


def test_pipeline_and_grid_search():
    X, y = task(n=300, seed=4)
    pipe = make_pipeline(StandardScaler(), RankRiskClassifier())
    grid = GridSearchCV(
        pipe,
        {"rankriskclassifier__objective": ["erm", "cvar:q=0.7"],
         "rankriskclassifier__reg": ["l2:0.01", "l2:0.1"]},
        cv=3,
        scoring="roc_auc",
    )
    grid.fit(X, y)
    assert grid.best_score_ > 0.8
    assert set(grid.best_params_) == {"rankriskclassifier__objective", "rankriskclassifier__reg"}


@pytest.mark.parametrize(
    "estimator", [RankRiskClassifier(max_iter=200), PartialAUCClassifier(epochs=2)]
)
def test_scikit_learns_estimator_checks(estimator):
    # Every check passes (the multi-class ones see "Only binary classification is supported",
    # the tag multi_class=False); none is exempted. scikit-learn itself skips two here: the
    # array-API check (SCIPY_ARRAY_API unset) and the pandas one (pandas not installed).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]
    assert failed == []
    assert sum(r["status"] == "passed" for r in results) >= 50
