"""rankrisk.metrics against scikit-learn and a numpy fast DeLong, back to back (issue 58).

    python benches/python_metrics.py [--sizes 1e6 1e7 1e8] [--repeats 3] [--threads 2]

Run it with the Python of python/test.sh's venv (target/python-venv/bin/python: rankrisk,
numpy, scikit-learn, scipy). For each size: labels with 10% positives, float64 scores with a
signal; each figure timed best of --repeats, one after the other in this process, nothing else
running. Prints a markdown table of seconds and the ratio of rankrisk's AUC with its DeLong
interval to scikit-learn's AUC alone.
"""

import argparse
import os
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np
    from scipy.stats import rankdata
    from sklearn.metrics import roc_auc_score

    from rankrisk import metrics

    def fast_delong(y, s):
        """Sun and Xu's fast DeLong with midranks from scipy: the AUC and its variance."""
        pos, neg = s[y == 1], s[y == 0]
        m, n = len(pos), len(neg)
        tz = rankdata(np.concatenate([pos, neg]))
        tx, ty = rankdata(pos), rankdata(neg)
        v10 = (tz[:m] - tx) / n
        v01 = 1.0 - (tz[m:] - ty) / m
        return v10.mean(), v10.var(ddof=1) / m + v01.var(ddof=1) / n

    def best(f):
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - t)
        return min(times), out

    rows = []
    for size in args.sizes:
        n = int(size)
        rng = np.random.default_rng(0)
        y = (rng.random(n) < 0.1).astype(np.int8)
        s = rng.normal(size=n) + 1.0 * y
        cases = [
            ("scikit-learn AUC", lambda: roc_auc_score(y, s)),
            ("scikit-learn pAUC (max_fpr 0.1)", lambda: roc_auc_score(y, s, max_fpr=0.1)),
            ("numpy fast DeLong (AUC + variance)", lambda: fast_delong(y, s)),
            ("rankrisk AUC", lambda: metrics.auc(y, s)),
            ("rankrisk AUC + DeLong interval", lambda: metrics.delong_ci(y, s)),
            ("rankrisk pAUC [0.05, 0.5]", lambda: metrics.pauc(y, s, fpr=(0.05, 0.5))),
            ("rankrisk McClish pAUC (max_fpr 0.1)",
             lambda: metrics.pauc(y, s, fpr=(0.0, 0.1), kind="mcclish")),
            ("rankrisk two-way pAUC (0.3, 0.7)",
             lambda: metrics.two_way_pauc(y, s, max_fpr=0.3, min_tpr=0.7)),
        ]
        timed = {}
        for name, f in cases:
            timed[name] = best(f)
        # The same figures, so that the timings compare like with like.
        assert abs(timed["scikit-learn AUC"][1] - timed["rankrisk AUC"][1]) < 1e-9
        assert abs(timed["numpy fast DeLong (AUC + variance)"][1][0]
                   - timed["rankrisk AUC + DeLong interval"][1].estimate) < 1e-9
        mc = timed["rankrisk McClish pAUC (max_fpr 0.1)"][1]
        assert abs(timed["scikit-learn pAUC (max_fpr 0.1)"][1] - mc) < 1e-9
        rows.append((n, {k: v[0] for k, v in timed.items()}))
        print(f"n = {n:.0e} done", flush=True)

    names = list(rows[0][1])
    print()
    print("| figure | " + " | ".join(f"n = {n:.0e}" for n, _ in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{t[name]:.3f} s" for _, t in rows) + " |")
    print("| rankrisk AUC + DeLong / scikit-learn AUC | " + " | ".join(
        f"{t['rankrisk AUC + DeLong interval'] / t['scikit-learn AUC']:.2f}x" for _, t in rows
    ) + " |")


if __name__ == "__main__":
    main()
