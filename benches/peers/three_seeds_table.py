#!/usr/bin/env python3
"""Tables of the three-seed sweep written by benches/peers/three_seeds.sh (issue 28).

    /work/venv-torch/bin/python benches/peers/three_seeds_table.py --out out/peers3 \
        --rankrisk target/release/rankrisk

Reads OUT/DATA/seedS/{ours,libauc}/METHOD/ as benches/peers/side_by_side.sh writes them and
prints, per data set:

1. mean (std over seeds) of test AUC and test pAUC[alpha, beta] at each run's evaluation point
   with the best validation pAUC, of the one-way pAUC over [0, beta] at the same point
   (computed from the run's test scores; the runs chose their point by pAUC[alpha, beta]), with
   mean training and evaluation seconds;
2. every run's test AUC with DeLong's 95% interval and test pAUC with the stratified bootstrap
   interval (our runs: as the run wrote them; LibAUC's: `rankrisk metrics` on the chosen pass's
   test scores, the same code), via side_by_side_table.py;
3. paired comparisons pooled over seeds: for two methods, the mean over seeds of the difference
   of test pAUC (and AUC) on the shared test set, with a 95% interval from a stratified
   bootstrap of the test images that resamples the same images for every seed and both methods
   (so the test set's sampling is paired and the seeds' correlation through the shared test
   set is kept), and how many seeds each way. The interval is over test images at these three
   trainings, not over training randomness; the seed std in table 1 shows that part.
   Pairs: each method against the same method of the other library, and the best method (by
   mean test pAUC) against every method within 0.005 of it.

Needs numpy (the peers' venv has it).
"""
import argparse
import csv
import json
import os
import statistics
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side_table import LIBAUC, OURS, libauc_row, ours_row  # noqa: E402

SEEDS = (0, 1, 2)
DATA = (("fashion-mnist", "Fashion-MNIST-LT (dresses, class 3, positive)"),
        ("mnist", "MNIST-LT (digit 3 positive)"))
SHORT = {"ours": "rankrisk", "libauc": "LibAUC"}


def read_scores(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    y = np.array([float(r["label"]) > 0 for r in rows])
    s = np.array([float(r["score"]) for r in rows])
    return y, s


def scores_path(lib, d):
    if lib == "ours":
        return os.path.join(d, "scores_test.csv")
    with open(os.path.join(d, "summary.json")) as f:
        k = json.load(f)["best_epoch"]
    return os.path.join(d, f"scores_test_epoch{k}.csv")


def auc_pauc(pos, neg, alpha, beta):
    """AUC (ties 1/2) and the one-way pAUC over FPR [alpha, beta] as src/metrics/auc.rs
    defines them: negatives sorted descending, the j-th weighted by |[j, j+1] & [a N, b N]|."""
    ps = np.sort(pos)
    above = len(ps) - np.searchsorted(ps, neg, side="right")
    tied = np.searchsorted(ps, neg, side="right") - np.searchsorted(ps, neg, side="left")
    credit = above + 0.5 * tied
    n_pos, n_neg = len(pos), len(neg)
    auc = credit.sum() / (n_pos * n_neg)
    order = np.argsort(-neg, kind="stable")
    j = np.arange(n_neg)
    w = np.clip(np.minimum(j + 1, beta * n_neg) - np.maximum(j, alpha * n_neg), 0, None)
    pauc = (w * credit[order]).sum() / (n_pos * (beta - alpha) * n_neg)
    return auc, pauc


def pooled(a, b, alpha, beta, resamples, seed):
    """Mean over seeds of (A - B) in AUC and pAUC, with the stratified paired bootstrap."""
    y = a[0][0]
    for ya, _ in a + b:
        if not np.array_equal(ya, y):
            raise ValueError("test labels differ between runs: not the same test set")
    pi, ni = np.flatnonzero(y), np.flatnonzero(~y)

    def diff(pidx, nidx):
        d = np.zeros(2)
        per_seed = []
        for (_, sa), (_, sb) in zip(a, b):
            ma = np.array(auc_pauc(sa[pidx], sa[nidx], alpha, beta))
            mb = np.array(auc_pauc(sb[pidx], sb[nidx], alpha, beta))
            per_seed.append(ma - mb)
            d += ma - mb
        return d / len(a), per_seed

    est, per_seed = diff(pi, ni)
    rng = np.random.default_rng(seed)
    boot = np.array([diff(rng.choice(pi, len(pi)), rng.choice(ni, len(ni)))[0]
                     for _ in range(resamples)])
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    return est, lo, hi, per_seed


def fmt_ms(vals):
    if len(vals) > 1:
        return f"{statistics.mean(vals):.4f} ({statistics.stdev(vals):.4f})"
    return f"{vals[0]:.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="out/peers3")
    ap.add_argument("--rankrisk", default="target/release/rankrisk")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.5)
    args = ap.parse_args()
    printed = False
    for data, title in DATA:
        runs = {}  # (lib, key) -> list over seeds of (row, dir)
        names = {}
        for lib, methods in (("ours", OURS), ("libauc", LIBAUC)):
            for key, name in methods:
                names[(lib, key)] = name
                found = []
                for s in SEEDS:
                    d = os.path.join(args.out, data, f"seed{s}", lib, key)
                    if not os.path.exists(os.path.join(d, "summary.json")):
                        continue
                    r = ours_row(os.path.join(d, "summary.json")) if lib == "ours" \
                        else libauc_row(d, args.rankrisk)
                    if r is not None:
                        r["test_auc"] = float(r["auc"].split()[0])
                        r["test_pauc"] = float(r["pauc"].split()[0])
                        found.append((s, r, d))
                if found:
                    runs[(lib, key)] = found
        if not runs:
            continue
        printed = True
        print(f"\n### {title}\n")
        print(f"| library | method | seeds | test AUC mean (std) | test pAUC[{args.alpha}, "
              f"{args.beta}] mean (std) | test pAUC[0, {args.beta}] mean (std) | train s | "
              "eval s |")
        print("|---|---|---:|---|---|---|---:|---:|")
        for (lib, key), found in runs.items():
            aucs = [r["test_auc"] for _, r, _ in found]
            paucs = [r["test_pauc"] for _, r, _ in found]
            oneway = []
            for _, _, d in found:
                y, sc = read_scores(scores_path(lib, d))
                oneway.append(auc_pauc(sc[y], sc[~y], 0.0, args.beta)[1])
            print(f"| {SHORT[lib]} | {names[(lib, key)]} | {len(found)} | {fmt_ms(aucs)} | "
                  f"{fmt_ms(paucs)} | {fmt_ms(oneway)} | "
                  f"{statistics.mean(r['train'] for _, r, _ in found):.0f} | "
                  f"{statistics.mean(r['eval'] for _, r, _ in found):.0f} |")
        print("\nEach run (best pass by validation pAUC; AUC with DeLong's 95% interval, pAUC "
              "with the stratified bootstrap's):\n")
        print("| library | method | seed | best pass | test AUC [95% CI] | test pAUC [95% CI] "
              "| median ms/step | train s | eval s |")
        print("|---|---|---:|---|---|---|---:|---:|---:|")
        for (lib, key), found in runs.items():
            for s, r, _ in found:
                print(f"| {SHORT[lib]} | {names[(lib, key)]} | {s} | {r['best']} | {r['auc']} | "
                      f"{r['pauc']} | {r['ms']:.1f} | {r['train']:.0f} | {r['eval']:.0f} |")
        # Paired comparisons over the seeds both runs have.
        means = {k: statistics.mean(r["test_pauc"] for _, r, _ in v) for k, v in runs.items()}
        best = max(means, key=means.get)
        pairs = [(("ours", k), ("libauc", k)) for k, _ in LIBAUC
                 if ("ours", k) in runs and ("libauc", k) in runs]
        pairs += [(best, k) for k in runs if k != best and means[best] - means[k] < 0.005
                  and (best, k) not in pairs and (k, best) not in pairs]
        print(f"\nPaired, pooled over seeds (A - B; 95% interval: {args.resamples} stratified "
              "bootstrap resamples of the shared test images):\n")
        print("| A | B | seeds | delta AUC [95% CI] | delta pAUC [95% CI] | seeds A > B (pAUC) |")
        print("|---|---|---:|---|---|---:|")
        for ka, kb in pairs:
            common = sorted({s for s, _, _ in runs[ka]} & {s for s, _, _ in runs[kb]})
            if not common:
                continue
            da = {s: d for s, _, d in runs[ka]}
            db = {s: d for s, _, d in runs[kb]}
            a = [read_scores(scores_path(ka[0], da[s])) for s in common]
            b = [read_scores(scores_path(kb[0], db[s])) for s in common]
            est, lo, hi, per_seed = pooled(a, b, args.alpha, args.beta, args.resamples, 0)
            wins = sum(1 for d in per_seed if d[1] > 0)
            print(f"| {SHORT[ka[0]]} {names[ka]} | {SHORT[kb[0]]} {names[kb]} | {len(common)} | "
                  f"{est[0]:+.4f} [{lo[0]:+.4f}, {hi[0]:+.4f}] | "
                  f"{est[1]:+.4f} [{lo[1]:+.4f}, {hi[1]:+.4f}] | {wins}/{len(common)} |")
    if not printed:
        print(f"no runs under {args.out}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
