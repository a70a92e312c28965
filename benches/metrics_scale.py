#!/usr/bin/env python3
"""Time `rankrisk metrics` at scale against scikit-learn's AUC on the same file (docs/GUIDE.md).

    python3 benches/metrics_scale.py --rankrisk target/release/rankrisk \\
        --python /path/to/venv/bin/python --rows 1000000 10000000

For each row count it writes a one-column scores file with benches/scores_csv.py (seed 0,
header `label,a`) unless it is there, then runs one after the other, nothing else running:
`rankrisk metrics FILE` with its defaults (2000 resamples, both pAUC intervals),
`rankrisk metrics FILE --resamples 0` (AUC with DeLong's interval and the three pAUCs, no
bootstrap), and, with `--python`, scikit-learn's `roc_auc_score` on the file read by pandas
(the read, the AUC, and both). It prints a markdown table of wall seconds and peak resident
memory (each command in its own process, `os.wait4`'s `ru_maxrss`). Standard library only; the
`--python` interpreter needs scikit-learn and pandas.
"""

import argparse
import os
import subprocess
import sys
import time

SKLEARN = """
import sys, time
import pandas, sklearn.metrics
t0 = time.perf_counter()
frame = pandas.read_csv(sys.argv[1])
t1 = time.perf_counter()
auc = sklearn.metrics.roc_auc_score(frame["label"].to_numpy(), frame["a"].to_numpy())
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {auc:.6f}")
"""


def timed(argv):
    """Run `argv`; return (wall seconds, peak resident MB, standard output)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = child.stdout.read()
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{err.decode()}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rankrisk", default="target/release/rankrisk")
    p.add_argument("--python", help="a Python with scikit-learn and pandas (optional)")
    p.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    p.add_argument("--dir", default="/tmp", help="where the scores files go")
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    print("| rows | command | wall s | peak MB |")
    print("|---|---|---|---|")
    for rows in a.rows:
        path = os.path.join(a.dir, f"scores_1col_{rows}.csv")
        if not os.path.exists(path):
            # Streamed through a file: a forked child's peak memory counts what its parent holds.
            both = path + ".both"
            subprocess.run([sys.executable, os.path.join(here, "scores_csv.py"), "--rows",
                            str(rows), "--seed", "0", "--out", both], check=True)
            with open(both, encoding="ascii") as src, \
                    open(path, "w", encoding="ascii", newline="\n") as f:
                for line in src:
                    f.write(line.rstrip("\n").rsplit(",", 1)[0] + "\n")
            os.remove(both)
        for label, extra in [("rankrisk metrics (defaults)", []),
                             ("rankrisk metrics --resamples 0", ["--resamples", "0"])]:
            wall, peak, _ = timed([a.rankrisk, "metrics", path, *extra])
            print(f"| {rows} | {label} | {wall:.2f} | {peak:.0f} |", flush=True)
        if a.python:
            wall, peak, out = timed([a.python, "-c", SKLEARN, path])
            read, auc, value = out.split()
            print(f"| {rows} | pandas read_csv + roc_auc_score (AUC {value}) | {wall:.2f} "
                  f"(read {read}, AUC {auc}) | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
