#!/usr/bin/env bash
# rankrisk and LibAUC 2.0.1 side by side on full Fashion-MNIST-LT (dresses positive): ResNet-20,
# batch 32 of 16 positives + 16 negatives, the same passes, 2 threads each, one after the other
# on this machine, then one table (benches/peers/side_by_side_table.py).
#
#   bash benches/peers/side_by_side.sh [PYTHON] [OUT] [EPOCHS] [DATA] [SEED]
#
# PYTHON: an interpreter that imports torch, torchvision, numpy and libauc 2.0.1 (default
# /work/venv-torch/bin/python; benches/peers/README.md says how to make one). Installs nothing.
# OUT (default out/peers): split.json, ours/METHOD/ (our runs), libauc/METHOD/ (LibAUC's), and
# table.md. A finished method's folder is kept on a second call (delete it to run it again).
# DATA: fashion-mnist (default; dresses, class 3, positive) or mnist (digit 3 positive). SEED
# (default 0) draws the split (export_split), our runs' initialization and batches, and
# LibAUC's initialization and batch stream; both libraries train on the same seeded split.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-/work/venv-torch/bin/python}"
out="${2:-out/peers}"
epochs="${3:-2}"
data="${4:-fashion-mnist}"
seed="${5:-0}"
# Adam's epsilon of our runs: PyTorch's 1e-8 as on LibAUC's side (issue 56); the tables
# measured before 2026-11-28 ran Burn's 1e-5 (ADAM_EPSILON=1e-5 reproduces them).
eps="${ADAM_EPSILON:-1e-8}"

if ! "$py" -c 'import torch, numpy, libauc' >/dev/null 2>&1; then
    echo "side_by_side: $py cannot import torch, numpy and libauc (see benches/peers/README.md)" >&2
    exit 3
fi
mkdir -p "$out"
cargo build --release --example cifar_lt --example export_split --bin rankrisk

task=(--data "$data" --positive 3 --seed "$seed")
[ -f "$out/split.json" ] || target/release/examples/export_split "${task[@]}" --json "$out/split.json"

for method in ce aucm mb sbcd sopa sopa-s sota-s; do
    dir="$out/ours/$method"
    [ -f "$dir/summary.json" ] && continue
    echo "== ours: $method"
    RAYON_NUM_THREADS=2 target/release/examples/cifar_lt "${task[@]}" --epochs "$epochs" \
        --method "$method" --adam-epsilon "$eps" --out "$dir" --quiet
done

libauc="$out/libauc"
missing=()
for method in ce aucm sopa sopa-s sota-s; do
    [ -f "$libauc/$method/summary.json" ] || missing+=("$method")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== LibAUC: ${missing[*]}"
    methods=$(IFS=,; echo "${missing[*]}")
    "$py" benches/peers/libauc_side_by_side.py --split "$out/split.json" \
        --data-dir "datasets/test-data/$data" --epochs "$epochs" --threads 2 \
        --methods "$methods" --seed "$seed" --out "$libauc"
fi

python3 benches/peers/side_by_side_table.py --out "$out" --rankrisk target/release/rankrisk \
    | tee "$out/table.md"
