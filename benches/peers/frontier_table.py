"""Issue 42's table from benches/peers/frontier_seeds.sh's folders: per data set and method,
mean (std) over seeds of the test pAUC[0, 0.3], pAUC[0.05, 0.5] (normalized, ours) and the
two-way pAUC (TPR >= 0.7, FPR <= 0.3; LibAUC's convention), each computed by `rankrisk metrics`
from the best validation pass's test scores (ours: scores_test.csv; LibAUC's: the best epoch's
scores_test_epochE.csv).

Where the first seed holds runs at several learning rates (frontier_seeds.sh's grid, folders
ours@lrX and libauc@lrX beside ours and libauc at the default 1e-3), each method's row is the
rate with the best validation pAUC[0.05, 0.5] on that seed (the runs' own model selection),
named in the lr column; the other seeds count only at that rate. With --per-seed
(frontier_seeds.sh's PER_SEED_GRID=1: every seed ran the grid) each seed's row takes that
seed's own best rate, and the lr column lists the rates seed by seed. Runs of
benches/peers/warm_start.sh (folder warm-ce: one pass of CE, then one of the method from CE's
model) are the rows "ours METHOD after CE".

    python3 benches/peers/frontier_table.py --out out/frontier --rankrisk target/release/rankrisk
    python3 benches/peers/frontier_table.py --out out/frontier --choose mnist --first-seed 0

The second prints the chosen rate per method, one "SIDE METHOD LR" line each.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import tempfile

OURS = ["ce", "sota-s", "staco", "pauci", "pauci-descent", "upauci", "upauci-exact"]
LIBAUC = ["sota-s", "staco"]


def scores(path):
    with open(path) as f:
        next(f)
        rows = [line.strip().split(",") for line in f if line.strip()]
    return [r[0] for r in rows], [r[1] for r in rows]


def figures(rankrisk, labels, cols):
    """{column: (pauc[0,0.3], pauc[0.05,0.5], two-way)} of the score columns, one CSV."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "s.csv")
        with open(csv, "w") as f:
            f.write("label," + ",".join(cols) + "\n")
            for i, lab in enumerate(labels):
                f.write(lab + "," + ",".join(cols[c][i] for c in cols) + "\n")
        for key, (a, b) in (("p03", (0.0, 0.3)), ("p0505", (0.05, 0.5))):
            j = os.path.join(tmp, key + ".json")
            subprocess.run([rankrisk, "metrics", csv, "--alpha", str(a), "--beta", str(b),
                            "--max-fpr", "0.3", "--min-tpr", "0.7", "--resamples", "10",
                            "--json", j], check=True, stdout=subprocess.DEVNULL)
            for c in json.load(open(j))["columns"]:
                out.setdefault(c["column"], {})[key] = c["pauc"]["estimate"]
                two = c["two_way_pauc"]  # an interval object since 2026-11-26, a number before
                out[c["column"]]["two"] = two["estimate"] if isinstance(two, dict) else two
    return out


def group(side, lr):
    """The folder of `side` (ours or libauc) at learning rate `lr` (a string as given)."""
    return side if lr == "1e-3" else f"{side}@lr{lr}"


def best_val(run, side):
    """The best validation pAUC[0.05, 0.5] of one finished run, or None if it did not finish."""
    s = os.path.join(run, "summary.json")
    if not os.path.exists(s):
        return None
    d = json.load(open(s))
    if side == "libauc":
        return d["best_val_pauc"]
    return max(h["val_pauc"] for h in d["history"])


def choose(out, data, first_seed):
    """{(side, method): lr} with the best validation pAUC on the first seed, over the rates
    present there."""
    return choose_in(os.path.join(out, data, f"seed{first_seed}"))


def choose_in(seed_dir):
    """{(side, method): lr} with the best validation pAUC in one seed's folder, over the rates
    present there."""
    picks = {}
    for side, methods in (("ours", OURS), ("libauc", LIBAUC)):
        for g in sorted(glob.glob(os.path.join(seed_dir, side + "*"))):
            if not os.path.isdir(g):
                continue
            name = os.path.basename(g)
            lr = name.split("@lr", 1)[1] if "@lr" in name else "1e-3"
            for m in methods:
                v = best_val(os.path.join(g, m), side)
                if v is not None and (v > picks.get((side, m), (None, -1.0))[1]):
                    picks[(side, m)] = (lr, v)
    return {k: lr for k, (lr, _) in picks.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/frontier")
    ap.add_argument("--rankrisk", default="target/release/rankrisk")
    ap.add_argument("--choose", metavar="DATA", help="print the chosen rates of DATA and exit")
    ap.add_argument("--first-seed", default="0", help="the seed the grid ran on")
    ap.add_argument("--per-seed", action="store_true",
                    help="each seed its own best rate per method (every seed ran the grid)")
    args = ap.parse_args()
    if args.choose:
        for (side, m), lr in sorted(choose(args.out, args.choose, args.first_seed).items()):
            print(side, m, lr)
        return
    print("| data | method | lr | seeds | pAUC[0, 0.3] | pAUC[0.05, 0.5] | two-way pAUC (TPR >= 0.7, FPR <= 0.3) |")
    print("|---|---|---|---|---|---|---|")
    for data in sorted(d for d in os.listdir(args.out) if d != "bin" and
                       os.path.isdir(os.path.join(args.out, d))):
        per = {}
        seeds = sorted(glob.glob(os.path.join(args.out, data, "seed*")))
        first_picks = choose_in(seeds[0]) if seeds and not args.per_seed else {}
        lr_of = {}
        for seed_dir in seeds:
            picks = choose_in(seed_dir) if args.per_seed else first_picks
            cols, labels = {}, None
            for m in OURS:
                lr = picks.get(("ours", m), "1e-3")
                p = os.path.join(seed_dir, group("ours", lr), m, "scores_test.csv")
                if os.path.exists(p):
                    labels, cols[f"ours {m}"] = scores(p)
                    lr_of.setdefault(f"ours {m}", []).append(lr)
            for m in OURS[1:]:
                # benches/peers/warm_start.sh: one pass of CE, then one of the method from it.
                p = os.path.join(seed_dir, "warm-ce", m, "scores_test.csv")
                if os.path.exists(p):
                    labels, cols[f"ours {m} after CE"] = scores(p)
                    lr_of.setdefault(f"ours {m} after CE", []).append("1e-3")
            for m in LIBAUC:
                lr = picks.get(("libauc", m), "1e-3")
                run = os.path.join(seed_dir, group("libauc", lr), m)
                if best_val(run, "libauc") is not None:
                    e = json.load(open(os.path.join(run, "summary.json")))["best_epoch"]
                    labs, cols[f"LibAUC {m}"] = scores(
                        os.path.join(run, f"scores_test_epoch{e}.csv"))
                    labels = labels or labs
                    lr_of.setdefault(f"LibAUC {m}", []).append(lr)
            if not cols:
                continue
            for c, f in figures(args.rankrisk, labels, cols).items():
                per.setdefault(c, []).append(f)
        for c, rows in per.items():
            def ms(key):
                v = [r[key] for r in rows]
                sd = statistics.stdev(v) if len(v) > 1 else 0.0
                return f"{statistics.mean(v):.4f} ({sd:.4f})"
            rates = lr_of[c]
            lr = rates[0] if len(set(rates)) == 1 else " ".join(rates)
            print(f"| {data} | {c} | {lr} | {len(rows)} | {ms('p03')} | {ms('p0505')} | {ms('two')} |")


if __name__ == "__main__":
    main()
