"""Issue 42's table from benches/peers/frontier_seeds.sh's folders: per data set and method,
mean (std) over seeds of the test pAUC[0, 0.3], pAUC[0.05, 0.5] (normalized, ours) and the
two-way pAUC (TPR >= 0.7, FPR <= 0.3; LibAUC's convention), each computed by `rankrisk metrics`
from the best validation pass's test scores (ours: scores_test.csv; LibAUC's: the best epoch's
scores_test_epochE.csv).

    python3 benches/peers/frontier_table.py --out out/frontier --rankrisk target/release/rankrisk
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import tempfile

OURS = ["ce", "sota-s", "staco", "pauci", "upauci"]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/frontier")
    ap.add_argument("--rankrisk", default="target/release/rankrisk")
    args = ap.parse_args()
    print("| data | method | seeds | pAUC[0, 0.3] | pAUC[0.05, 0.5] | two-way pAUC (TPR >= 0.7, FPR <= 0.3) |")
    print("|---|---|---|---|---|---|")
    for data in sorted(d for d in os.listdir(args.out) if d != "bin" and
                       os.path.isdir(os.path.join(args.out, d))):
        per = {}
        for seed_dir in sorted(glob.glob(os.path.join(args.out, data, "seed*"))):
            cols, labels = {}, None
            for m in OURS:
                p = os.path.join(seed_dir, "ours", m, "scores_test.csv")
                if os.path.exists(p):
                    labels, cols[f"ours {m}"] = scores(p)
            for m in LIBAUC:
                s = os.path.join(seed_dir, "libauc", m, "summary.json")
                if os.path.exists(s):
                    e = json.load(open(s))["best_epoch"]
                    labs, cols[f"LibAUC {m}"] = scores(
                        os.path.join(seed_dir, "libauc", m, f"scores_test_epoch{e}.csv"))
                    labels = labels or labs
            if not cols:
                continue
            for c, f in figures(args.rankrisk, labels, cols).items():
                per.setdefault(c, []).append(f)
        for c, rows in per.items():
            def ms(key):
                v = [r[key] for r in rows]
                sd = statistics.stdev(v) if len(v) > 1 else 0.0
                return f"{statistics.mean(v):.4f} ({sd:.4f})"
            print(f"| {data} | {c} | {len(rows)} | {ms('p03')} | {ms('p0505')} | {ms('two')} |")


if __name__ == "__main__":
    main()
