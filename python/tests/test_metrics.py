"""rankrisk.metrics against scikit-learn, independent numpy references and the command line."""

import json
import subprocess

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from rankrisk import metrics


def data(n=400, share=0.3, seed=0, ties=True):
    """Labels (0/1) and scores with a signal, rounded so that scores tie within and across
    classes."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < share).astype(np.int64)
    s = rng.normal(size=n) + 1.2 * y
    if ties:
        s = np.round(s, 1)
    return y, s


def brute_pauc(y, s, a, b):
    """Eq. (2) of the FPR-range pAUC paper by its definition: the negatives in descending
    order, the j-th weighted by the overlap of [j, j+1] with [a N-, b N-], each crediting every
    positive above it 1 and every tied positive 1/2."""
    pos, neg = s[y > 0], np.sort(s[y <= 0])[::-1]
    lo, hi = a * len(neg), b * len(neg)
    total = 0.0
    for j, v in enumerate(neg):
        w = max(0.0, min(j + 1, hi) - max(j, lo))
        total += w * (np.sum(pos > v) + 0.5 * np.sum(pos == v))
    return total / (len(pos) * (hi - lo))


def midrank_delong(y, s):
    """DeLong's AUC variance from midranks (Sun and Xu's fast form), written apart from the
    Rust one."""
    pos, neg = s[y > 0], s[y <= 0]
    m, n = len(pos), len(neg)

    def midranks(x):
        order = np.argsort(x, kind="mergesort")
        ranks = np.empty(len(x))
        xs = x[order]
        i = 0
        while i < len(x):
            j = i
            while j < len(x) and xs[j] == xs[i]:
                j += 1
            ranks[order[i:j]] = 0.5 * (i + j - 1) + 1
            i = j
        return ranks

    both = midranks(np.concatenate([pos, neg]))
    tx, ty = midranks(pos), midranks(neg)
    v10 = (both[:m] - tx) / n
    v01 = 1.0 - (both[m:] - ty) / m
    auc = v10.mean()
    var = v10.var(ddof=1) / m + v01.var(ddof=1) / n
    return auc, var


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auc_and_mcclish_equal_scikit_learn(seed):
    y, s = data(seed=seed)
    assert metrics.auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-14)
    for max_fpr in (0.05, 0.1, 0.3, 0.5, 1.0):
        ours = metrics.pauc(y, s, fpr=(0.0, max_fpr), kind="mcclish")
        assert ours == pytest.approx(roc_auc_score(y, s, max_fpr=max_fpr), abs=1e-12)


def test_labels_in_every_form_give_the_same_figure():
    y, s = data(seed=3)
    expected = metrics.auc(y, s)
    for labels in (y.astype(bool), 2 * y - 1, y.astype(np.float32), y.astype(np.uint8), list(y)):
        assert metrics.auc(labels, s) == expected
    assert metrics.auc(y, s.astype(np.float32)) == metrics.auc(y, s.astype(np.float32).astype(float))
    assert metrics.auc(y, list(s)) == expected
    # A strided view is read as well as a contiguous copy.
    y2, s2 = np.repeat(y, 2), np.repeat(s, 2)
    assert metrics.auc(y2[::2], s2[::2]) == expected


@pytest.mark.parametrize("fpr", [(0.0, 0.3), (0.05, 0.5), (0.1, 0.9), (0.0, 1.0)])
def test_pauc_equals_its_definition(fpr):
    y, s = data(n=300, seed=4)
    ours = metrics.pauc(y, s, fpr=fpr)
    assert ours == pytest.approx(brute_pauc(y, s, *fpr), abs=1e-12)
    raw = metrics.pauc(y, s, fpr=fpr, kind="raw")
    assert raw == pytest.approx((fpr[1] - fpr[0]) * ours, abs=1e-15)


def test_two_way_pauc_is_defined_at_every_boundary():
    y, s = data(seed=5)
    # The whole ROC square: the AUC.
    assert metrics.two_way_pauc(y, s, max_fpr=1.0, min_tpr=0.0) == pytest.approx(
        metrics.auc(y, s), abs=1e-15
    )
    # LibAUC's definition: the lowest-scored positives against the highest-scored negatives.
    pos, neg = np.sort(s[y > 0]), np.sort(s[y <= 0])[::-1]
    kp = max(1, round(len(pos) * (1 - 0.6)))
    kn = max(1, round(len(neg) * 0.2))
    p, n = pos[:kp, None], neg[None, :kn]
    expected = ((p > n) + 0.5 * (p == n)).mean()
    assert metrics.two_way_pauc(y, s, max_fpr=0.2, min_tpr=0.6) == pytest.approx(expected, abs=1e-15)
    for bad in ((0.0, 0.5), (0.5, 1.0)):
        with pytest.raises(ValueError):
            metrics.two_way_pauc(y, s, max_fpr=bad[0], min_tpr=bad[1])


def test_roc_curve_ends_and_area():
    y, s = data(seed=6)
    fpr, tpr, thresholds = metrics.roc_curve(y, s)
    assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert np.isinf(thresholds[0]) and len(thresholds) == len(np.unique(s)) + 1
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    assert trapezoid(tpr, fpr) == pytest.approx(metrics.auc(y, s), abs=1e-12)


def test_delong_interval_and_test_equal_a_midrank_reference():
    y, s = data(seed=7)
    auc, var = midrank_delong(y, s)
    est, low, high = metrics.delong_ci(y, s, level=0.9)
    half = 1.6448536269514722 * np.sqrt(var)
    assert est == pytest.approx(auc, abs=1e-14)
    assert (low, high) == pytest.approx((auc - half, min(1.0, auc + half)), abs=1e-12)
    # The paired test of a scorer against itself shifted by noise.
    rng = np.random.default_rng(8)
    other = s + rng.normal(scale=0.8, size=len(s))
    t = metrics.delong_test(y, s, other)
    assert t.difference == pytest.approx(metrics.auc(y, s) - metrics.auc(y, other), abs=1e-14)
    assert t.z == pytest.approx(t.difference / t.std_error, rel=1e-12)
    assert 0.0 <= t.p_value <= 1.0
    assert metrics.delong_test(y, s, s).p_value == 1.0


def test_what_users_hand_them_gives_the_same_figures():
    y, s = data(seed=5)
    want = metrics.auc(y, s)
    # model(x)'s (n, 1) column, for either argument or both, as scikit-learn takes it.
    for yy, ss in [(y, s[:, None]), (y[:, None], s), (y[:, None], s[:, None])]:
        assert metrics.auc(yy, ss) == want
        assert metrics.delong_ci(yy, ss) == metrics.delong_ci(y, s)
    fpr, tpr, _ = metrics.roc_curve(y, s[:, None])
    assert np.array_equal(fpr, metrics.roc_curve(y, s)[0])
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        assert metrics.auc(pd.Series(y), pd.Series(s)) == want
    try:
        import torch
    except ImportError:
        return
    t = torch.from_numpy(s).requires_grad_()
    assert metrics.auc(torch.from_numpy(y), t[:, None]) == want
    assert metrics.pauc(y, t.float(), fpr=(0.05, 0.5)) == metrics.pauc(y, s.astype(np.float32),
                                                                        fpr=(0.05, 0.5))
    with pytest.raises(TypeError, match="bfloat16"):
        metrics.auc(y, t.bfloat16())


def test_multi_label_columns():
    cols = [data(seed=k) for k in range(3)]
    y = np.stack([c[0] for c in cols], axis=1)
    s = np.stack([c[1] for c in cols], axis=1)
    per_column = [metrics.auc(c[0], c[1]) for c in cols]
    assert list(metrics.auc(y, s)) == per_column
    # DeLong's AUC is the mean of its components, equal to the count up to rounding.
    intervals = metrics.delong_ci(y, s)
    assert [i.estimate for i in intervals] == pytest.approx(per_column, abs=1e-15)
    assert intervals == [metrics.delong_ci(c[0], c[1]) for c in cols]
    assert list(metrics.pauc(y, s, fpr=(0.05, 0.5))) == [
        metrics.pauc(c[0], c[1], fpr=(0.05, 0.5)) for c in cols
    ]


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    y, s = data(seed=9)
    a = metrics.bootstrap_ci(y, s, fpr=(0.05, 0.5), resamples=300, seed=1)
    b = metrics.bootstrap_ci(y, s, fpr=(0.05, 0.5), resamples=300, seed=1)
    c = metrics.bootstrap_ci(y, s, fpr=(0.05, 0.5), resamples=300, seed=2)
    assert a == b and a != c
    assert a.estimate == metrics.pauc(y, s, fpr=(0.05, 0.5))
    assert a.lower < a.estimate < a.upper
    t = metrics.bootstrap_test(y, s, s[::-1].copy(), fpr=(0.05, 0.5), resamples=300, seed=1)
    assert t.p_value < 0.05


def test_figures_equal_the_command_lines(tmp_path, cli):
    y, s1 = data(n=500, seed=10)
    s2 = np.round(s1 + np.random.default_rng(11).normal(scale=0.7, size=len(s1)), 2)
    csv = tmp_path / "scores.csv"
    rows = "\n".join(f"{int(a)},{float(b)!r},{float(c)!r}" for a, b, c in zip(y, s1, s2))
    csv.write_text("label,first,second\n" + rows + "\n")
    out = tmp_path / "metrics.json"
    subprocess.run(
        [cli, "metrics", str(csv), "--alpha", "0.05", "--beta", "0.4", "--min-tpr", "0.6",
         "--resamples", "250", "--seed", "4", "--json", str(out)],
        check=True,
        capture_output=True,
    )
    report = json.loads(out.read_text())
    for column, s in zip(report["columns"], (s1, s2)):
        est, low, high = metrics.delong_ci(y, s)
        assert (column["auc"]["estimate"], column["auc"]["lower"], column["auc"]["upper"]) == (
            est, low, high,
        )
        boot = metrics.bootstrap_ci(y, s, fpr=(0.05, 0.4), resamples=250, seed=4)
        assert (column["pauc"]["estimate"], column["pauc"]["lower"], column["pauc"]["upper"]) == (
            tuple(boot)
        )
        assert column["mcclish_pauc"] == metrics.pauc(y, s, fpr=(0.0, 0.4), kind="mcclish")
        assert column["two_way_pauc"]["estimate"] == metrics.two_way_pauc(
            y, s, max_fpr=0.4, min_tpr=0.6
        )
    pair = report["pairs"][0]
    assert pair["auc"] == metrics.delong_test(y, s1, s2)._asdict()
    boot = metrics.bootstrap_test(y, s1, s2, fpr=(0.05, 0.4), resamples=250, seed=4)
    assert pair["pauc"] == boot._asdict()


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda y, s: metrics.auc(y, s.astype(np.float16)), TypeError, "float16"),
        (lambda y, s: metrics.roc_curve(y, np.stack([s, s], axis=1)), ValueError, "1-D"),
        (lambda y, s: metrics.auc(y, np.where(np.arange(len(s)) == 7, np.nan, s)), ValueError,
         "score 7 is not finite"),
        (lambda y, s: metrics.auc(np.ones_like(y), s), ValueError, "both classes"),
        (lambda y, s: metrics.auc(np.where(np.arange(len(y)) == 3, 2, y), s), ValueError,
         "y_true[3] = 2"),
        (lambda y, s: metrics.auc(y[:-1], s), ValueError, "scores for"),
        (lambda y, s: metrics.auc(y, s.astype(complex)), TypeError, "dtype"),
        (lambda y, s: metrics.pauc(y, s, fpr=(0.5, 0.2)), ValueError, "FPR range"),
        (lambda y, s: metrics.pauc(y, s, fpr=0.3), ValueError, "pair"),
        (lambda y, s: metrics.delong_ci(y, s, level=1.5), ValueError, "level"),
        (lambda y, s: metrics.auc(y, "scores"), ValueError, "1-D"),
    ],
)
def test_bad_input_raises_an_error_that_names_it(call, error, words):
    y, s = data(n=50, seed=12)
    with pytest.raises(error, match=None) as info:
        call(y, s)
    assert words in str(info.value), str(info.value)
