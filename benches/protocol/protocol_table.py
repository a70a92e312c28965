"""Issue 68's tables from benches/protocol/paper_protocol.sh's run folders (or a digest of
them): the first seed's grid (every rate's best validation pAUC[0.05, 0.5] and its test
figures), each method's choice (the grid point with the best validation pAUC[0.05, 0.5]), and
mean (std) over seeds at the choice of the test pAUC[0.05, 0.5] (normalized, the paper's
figure), the two-way pAUC (TPR >= 0.7, FPR <= 0.3) and the AUC, each from the run's best
evaluation point by validation (its summary.json), beside the paper's CIFAR-10-LT column.

    python3 benches/protocol/protocol_table.py --out out/protocol68 [--digest FILE]
    python3 benches/protocol/protocol_table.py --out out/protocol68 --digest FILE --update
    python3 benches/protocol/protocol_table.py --out out/protocol68 --choose fashion-mnist-6 --method sbcd

--digest FILE keeps each finished run's figures in FILE (JSON, keyed DATA/seedS/LABEL), adds
the finished runs under OUT that FILE lacks, and makes the tables from FILE alone, so a sweep
carried over machines needs no run folders. --choose prints one method's chosen grid label
after its "@lr" ("0.1", or "0.1,g2000" for AGD-SBCD's gamma).
"""
import argparse
import glob
import json
import os
import statistics

PAPER_CIFAR10_LT = {"ce": "0.9337 (0.0043)", "aucm": "0.9016 (0.0137)",
                    "mb": "0.9323 (0.0055)", "sbcd": "0.9408 (0.0084)"}
NAMES = {"ce": "CE (Adam, /10 after epoch 5)", "aucm": "AUC-M (PESG, /10 after epoch 5)",
         "mb": "MB (SGD, lr/sqrt(t))", "sbcd": "AGD-SBCD",
         "sota-s": "SOTA-s (Adam, /10 after epoch 5)", "staco": "STACO (Adam, /10 after epoch 5)",
         "pauci": "PAUCI (Adam, /10 after epoch 5)", "upauci": "UPAUCI (Adam, /10 after epoch 5)"}


def finished(out):
    """{key: figures} of every run folder under OUT with a summary.json."""
    rec = {}
    for path in glob.glob(os.path.join(out, "*", "seed*", "*", "summary.json")):
        run = os.path.dirname(path)
        seed_dir = os.path.dirname(run)
        key = "/".join([os.path.basename(os.path.dirname(seed_dir)),
                        os.path.basename(seed_dir), os.path.basename(run)])
        with open(path) as f:
            best = json.load(f)["best"]
        rec[key] = {k: best.get(k) for k in
                    ("val_pauc", "val_auc", "test_pauc", "test_auc", "test_two_way", "epoch")}
    return rec


def records(out, digest=None, update=False):
    rec = {}
    if digest and os.path.exists(digest):
        with open(digest) as f:
            rec = json.load(f)
    new = {k: v for k, v in finished(out).items() if k not in rec}
    rec.update(new)
    if digest and (new or update):
        # A whole new file renamed over the old one: a sweep running beside this one reads
        # either digest, never a half-written one (paper_protocol.sh holds a lock around it).
        tmp = f"{digest}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(dict(sorted(rec.items())), f, indent=1)
            f.write("\n")
        os.replace(tmp, digest)
    return rec


def split(key):
    data, seed, label = key.split("/")
    method, point = label.split("@lr", 1)
    return data, int(seed[4:]), method, point


def choose(rec, data, method, first_seed):
    """The grid point of `method` with the best validation pAUC on the first seed."""
    pts = [(v["val_pauc"], point) for k, v in rec.items()
           for d, s, m, point in [split(k)] if d == data and s == first_seed and m == method]
    if not pts:
        raise SystemExit(f"protocol_table: no {method} run of {data} seed {first_seed}")
    return max(pts, key=lambda p: p[0])[1]


def ms(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    if len(xs) == 1:
        return f"{xs[0]:.4f}"
    return f"{statistics.mean(xs):.4f} ({statistics.stdev(xs):.4f})"


def tables(rec, first_seed):
    datasets = sorted({split(k)[0] for k in rec})
    for data in datasets:
        methods = [m for m in NAMES if any(split(k)[0] == data and split(k)[2] == m for k in rec)]
        print(f"\n### {data}: seed {first_seed}'s grid\n")
        print("| method | lr (c), gamma | best val pAUC[0.05, 0.5] | its epoch | test pAUC[0.05, 0.5] | test two-way |")
        print("|---|---|---|---|---|---|")
        for m in methods:
            for k in sorted(k for k in rec if split(k)[0] == data and split(k)[1] == first_seed
                            and split(k)[2] == m):
                v = rec[k]
                print(f"| {m} | {split(k)[3]} | {v['val_pauc']:.4f} | {v['epoch']} | "
                      f"{v['test_pauc']:.4f} | {ms([v['test_two_way']])} |")
        print(f"\n### {data}: mean (std) over seeds at each method's choice\n")
        print("| method | chosen | seeds | test pAUC[0.05, 0.5] | test two-way | test AUC | "
              "paper, CIFAR-10-LT pAUC[0.05, 0.5] |")
        print("|---|---|---|---|---|---|---|")
        for m in methods:
            c = choose(rec, data, m, first_seed)
            runs = [v for k, v in rec.items() if split(k)[0] == data and split(k)[2] == m
                    and split(k)[3] == c]
            print(f"| {NAMES[m]} | {c} | {len(runs)} | {ms([r['test_pauc'] for r in runs])} | "
                  f"{ms([r['test_two_way'] for r in runs])} | {ms([r['test_auc'] for r in runs])} | "
                  f"{PAPER_CIFAR10_LT.get(m, '-')} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/protocol68")
    ap.add_argument("--digest", metavar="FILE")
    ap.add_argument("--update", action="store_true", help="update the digest and exit")
    ap.add_argument("--choose", metavar="DATA")
    ap.add_argument("--method")
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args()
    rec = records(args.out, args.digest, args.update)
    if args.update:
        return
    if args.choose:
        print(choose(rec, args.choose, args.method, args.first_seed))
        return
    tables(rec, args.first_seed)


if __name__ == "__main__":
    main()
