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
    python3 benches/peers/frontier_table.py --out out/frontier --digest FILE --per-seed --validation
    python3 benches/peers/frontier_table.py --out out/frontier --digest FILE --at 1e-3

The second prints the chosen rate per method, one "SIDE METHOD LR" line each. The third keeps
each run's figures (its best validation pAUC[0.05, 0.5] and the three test figures) in FILE,
adds the finished runs under OUT that FILE lacks, and makes the table from FILE: a sweep longer
than one machine's life goes on elsewhere from the committed FILE (frontier_seeds.sh's DIGEST
skips the runs it holds) and its table needs no run folders. --validation adds the mean (std)
of the runs' best validation pAUC[0.05, 0.5] as a last column. The fourth prints every method
at one rate of the grid, none chosen.
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
SIDES = (("ours", OURS), ("libauc", LIBAUC))


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
    """The best validation pAUC[0.05, 0.5] of one finished run."""
    d = json.load(open(os.path.join(run, "summary.json")))
    if side == "libauc":
        return d["best_val_pauc"]
    return max(h["val_pauc"] for h in d["history"])


def test_scores(run, side):
    """(labels, scores) of one finished run's best validation point on the test split."""
    if side == "libauc":
        e = json.load(open(os.path.join(run, "summary.json")))["best_epoch"]
        return scores(os.path.join(run, f"scores_test_epoch{e}.csv"))
    return scores(os.path.join(run, "scores_test.csv"))


def finished_runs(out):
    """{key: (side, folder)} of every finished run under OUT; a key is
    DATA/seedS/GROUP/METHOD, GROUP one of ours, ours@lrX, libauc, libauc@lrX, warm-ce."""
    runs = {}
    for seed_dir in sorted(glob.glob(os.path.join(out, "*", "seed*"))):
        for g in sorted(glob.glob(os.path.join(seed_dir, "*"))):
            name = os.path.basename(g)
            if not os.path.isdir(g):
                continue
            side, methods = SIDES[1] if name.startswith("libauc") else SIDES[0]
            for m in methods:
                run = os.path.join(g, m)
                if os.path.exists(os.path.join(run, "summary.json")):
                    runs[os.path.relpath(run, out)] = (side, run)
    return runs


def records(out, digest=None, rankrisk=None):
    """{key: {"val": best validation pAUC[0.05, 0.5], and with `rankrisk` "p03", "p0505",
    "two": the test figures}} of the runs in `digest` (a JSON file this function wrote,
    which keeps a sweep's figures after its folders are gone) and of the finished runs under
    OUT that it lacks. With `rankrisk` and `digest`, the new runs are added to the file."""
    rec = {}
    if digest and os.path.exists(digest):
        rec = json.load(open(digest))
    new = {k: v for k, v in finished_runs(out).items() if k not in rec}
    by_seed = {}
    for k, (side, run) in new.items():
        rec[k] = {"val": best_val(run, side)}
        by_seed.setdefault(os.path.dirname(os.path.dirname(k)), []).append(k)
    if rankrisk is None:
        return rec
    for keys in by_seed.values():
        cols, labels = {}, None
        for k in keys:
            side, run = new[k]
            labels, cols[k] = test_scores(run, side)
        for k, f in figures(rankrisk, labels, cols).items():
            rec[k].update(f)
    if digest and new:
        with open(digest, "w") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
            f.write("\n")
    return rec


def choose(out, data, first_seed, digest=None):
    """{(side, method): lr} with the best validation pAUC on the first seed, over the rates
    present there (its runs under OUT and in `digest`)."""
    return choose_in(records(out, digest), f"{data}/seed{first_seed}")


def choose_in(rec, seed):
    """{(side, method): lr} with the best validation pAUC of one seed (DATA/seedS), over the
    rates present there."""
    groups = sorted({k.split("/")[2] for k in rec if k.startswith(seed + "/")})
    picks = {}
    for side, methods in SIDES:
        for name in groups:
            if not name.startswith(side):
                continue
            lr = name.split("@lr", 1)[1] if "@lr" in name else "1e-3"
            for m in methods:
                r = rec.get(f"{seed}/{name}/{m}")
                if r is not None and r["val"] > picks.get((side, m), (None, -1.0))[1]:
                    picks[(side, m)] = (lr, r["val"])
    return {k: lr for k, (lr, _) in picks.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/frontier")
    ap.add_argument("--rankrisk", default="target/release/rankrisk")
    ap.add_argument("--choose", metavar="DATA", help="print the chosen rates of DATA and exit")
    ap.add_argument("--first-seed", default="0", help="the seed the grid ran on")
    ap.add_argument("--per-seed", action="store_true",
                    help="each seed its own best rate per method (every seed ran the grid)")
    ap.add_argument("--digest", metavar="FILE",
                    help="a JSON file of each run's validation and test figures: read, the "
                    "finished runs under OUT it lacks added, the table made from it")
    ap.add_argument("--at", metavar="LR",
                    help="every method's row at this rate, none chosen (a grid's default column)")
    ap.add_argument("--validation", action="store_true",
                    help="a last column: the mean (std) of the runs' best validation pAUC")
    args = ap.parse_args()
    if args.choose:
        for (side, m), lr in sorted(choose(args.out, args.choose, args.first_seed,
                                               args.digest).items()):
            print(side, m, lr)
        return
    rec = records(args.out, args.digest, args.rankrisk)
    head = "| data | method | lr | seeds | pAUC[0, 0.3] | pAUC[0.05, 0.5] | two-way pAUC (TPR >= 0.7, FPR <= 0.3) |"
    rule = "|---|---|---|---|---|---|---|"
    if args.validation:
        head, rule = head + " validation pAUC[0.05, 0.5] |", rule + "---|"
    print(head)
    print(rule)
    for data in sorted({k.split("/")[0] for k in rec}):
        per = {}
        seeds = sorted({"/".join(k.split("/")[:2]) for k in rec if k.startswith(data + "/")})
        # One rate per method for every seed (--at, or the first seed's choice), or None: each
        # seed's own choice.
        fixed = None
        if args.at:
            fixed = {(side, m): args.at for side, ms in SIDES for m in ms}
        elif not args.per_seed:
            fixed = choose_in(rec, seeds[0])
        lr_of = {}
        for seed in seeds:
            picks = fixed if fixed is not None else choose_in(rec, seed)
            rows = []
            for m in OURS:
                lr = picks.get(("ours", m), "1e-3")
                rows.append((f"ours {m}", lr, f"{seed}/{group('ours', lr)}/{m}"))
            # benches/peers/warm_start.sh: one pass of CE, then one of the method from it.
            rows += [(f"ours {m} after CE", "1e-3", f"{seed}/warm-ce/{m}") for m in OURS[1:]]
            for m in LIBAUC:
                lr = picks.get(("libauc", m), "1e-3")
                rows.append((f"LibAUC {m}", lr, f"{seed}/{group('libauc', lr)}/{m}"))
            for c, lr, k in rows:
                if k in rec:
                    per.setdefault(c, []).append(rec[k])
                    lr_of.setdefault(c, []).append(lr)
        for c, rows in per.items():
            def ms(key):
                v = [r[key] for r in rows]
                sd = statistics.stdev(v) if len(v) > 1 else 0.0
                return f"{statistics.mean(v):.4f} ({sd:.4f})"
            rates = lr_of[c]
            lr = rates[0] if len(set(rates)) == 1 else " ".join(rates)
            line = f"| {data} | {c} | {lr} | {len(rows)} | {ms('p03')} | {ms('p0505')} | {ms('two')} |"
            print(line + (f" {ms('val')} |" if args.validation else ""))


if __name__ == "__main__":
    main()
