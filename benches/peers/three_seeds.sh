#!/usr/bin/env bash
# The pAUC family against LibAUC 2.0.1 over three seeds on two full long-tailed sets (issue 28):
# benches/peers/side_by_side.sh for each data set and seed, one run at a time, then one table
# of mean (std) over seeds with the paired comparisons (benches/peers/three_seeds_table.py).
#
#   bash benches/peers/three_seeds.sh [PYTHON] [OUT] [EPOCHS]
#
# OUT (default out/peers3) holds DATA/seedS/ as side_by_side.sh writes it, and table.md. A
# finished run is kept on a second call, so an interrupted sweep continues where it stopped.
# Measured on this project's 2-core machine: about 15 minutes per data set and seed (7 of our
# runs, 5 of LibAUC's), 90 minutes in all.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-/work/venv-torch/bin/python}"
out="${2:-out/peers3}"
epochs="${3:-2}"
for data in fashion-mnist mnist; do
    for seed in 0 1 2; do
        echo "==== $data, seed $seed"
        bash benches/peers/side_by_side.sh "$py" "$out/$data/seed$seed" "$epochs" "$data" "$seed"
    done
done
"$py" benches/peers/three_seeds_table.py --out "$out" --rankrisk target/release/rankrisk \
    | tee "$out/table.md"
