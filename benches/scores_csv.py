#!/usr/bin/env python3
"""Write a seeded scores CSV for timing `rankrisk metrics` at scale (docs/GUIDE.md).

    python3 benches/scores_csv.py --rows 1000000 --seed 0 --out /tmp/scores_1e6.csv
    time target/release/rankrisk metrics /tmp/scores_1e6.csv

The file has a header `label,a,b` and one row per sample: a label (1 with probability
`--positives`, else 0) and two score columns, `a` a standard normal shifted by 1 for positives,
`b` a noisier scorer of the same samples (shift 0.7 plus uniform noise), both printed with
`--decimals` decimals (4 by default, so that scores tie as real model outputs do). Python's
`random.Random(seed)` (Mersenne Twister) makes the file the same on every machine and Python
3 version. Standard library only.
"""

import argparse
import random
import sys


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="rows (samples), default 10^6")
    p.add_argument("--seed", type=int, default=0, help="seed of random.Random, default 0")
    p.add_argument("--positives", type=float, default=0.25, help="share of positives, default 0.25")
    p.add_argument("--decimals", type=int, default=4, help="decimals of the scores, default 4")
    p.add_argument("--out", default="-", help="output file, default standard output")
    a = p.parse_args()
    if a.rows < 2 or not 0.0 < a.positives < 1.0 or a.decimals < 0:
        p.error("need --rows >= 2, 0 < --positives < 1 and --decimals >= 0")
    rng = random.Random(a.seed)
    out = sys.stdout if a.out == "-" else open(a.out, "w", encoding="ascii", newline="\n")
    d = a.decimals
    lines = ["label,a,b"]
    for i in range(a.rows):
        # Rows 0 and 1 are one of each class, so that both classes are present at any size.
        positive = i == 0 or (i != 1 and rng.random() < a.positives)
        g = rng.gauss(0.0, 1.0)
        s_a = g + (1.0 if positive else 0.0)
        s_b = g + (0.7 if positive else 0.0) + rng.uniform(-0.5, 0.5)
        lines.append(f"{1 if positive else 0},{s_a:.{d}f},{s_b:.{d}f}")
        if len(lines) >= 100_000:
            out.write("\n".join(lines) + "\n")
            lines = []
    if lines:
        out.write("\n".join(lines) + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
