#!/usr/bin/env bash
# Our training against LibAUC 2.0.1's, end to end, alternated N times back to back (issue 41):
# for each pair and method, one run of `examples/cifar_lt` (full Fashion-MNIST-LT, dresses
# against the rest, ResNet-20, batch 32) and then one of `libauc_side_by_side.py` on
# `export_split`'s split of the same seed, 2 threads each; then a line per pair with both
# training times (evaluation and checkpoints excluded on both sides), their ratio, and the
# median ratio per method, with each side's test AUC at its best pass on validation.
# docs/SPEED.md's end-to-end ratios come from it.
#
#   bash benches/peers/train_pairs.sh [PYTHON] [N] [METHODS] [EPOCHS] [LOGDIR]
#
# METHODS is a comma-separated list of methods both sides have (ce, aucm, sopa, sopa-s,
# sota-s; default ce,sota-s), EPOCHS the passes (default 1). About 45 s per pair and method
# and pass on this project's 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-/work/venv-torch/bin/python}"
n="${2:-3}"
methods="${3:-ce,sota-s}"
epochs="${4:-1}"
logs="${5:-out/train-pairs}"
seed=0
# Adam's epsilon of our runs: PyTorch's 1e-8 as on LibAUC's side (issue 56); the tables
# measured before 2026-11-28 ran Burn's 1e-5 (ADAM_EPSILON=1e-5 reproduces them).
eps="${ADAM_EPSILON:-1e-8}"
task=(--data fashion-mnist --positive 3 --seed "$seed")
mkdir -p "$logs"
cargo build --release --example cifar_lt --example export_split
split="$logs/split.json"
[ -f "$split" ] || target/release/examples/export_split "${task[@]}" --json "$split"
IFS=, read -r -a list <<< "$methods"
for i in $(seq 1 "$n"); do
    for m in "${list[@]}"; do
        rm -rf "$logs/ours_${m}_$i" "$logs/libauc_$i/$m"
        RAYON_NUM_THREADS=2 target/release/examples/cifar_lt "${task[@]}" --epochs "$epochs" \
            --method "$m" --adam-epsilon "$eps" --bootstrap 0 --quiet --out "$logs/ours_${m}_$i" \
            > "$logs/ours_${m}_$i.log" 2>&1
        "$py" benches/peers/libauc_side_by_side.py --split "$split" \
            --data-dir datasets/test-data/fashion-mnist --epochs "$epochs" --threads 2 \
            --methods "$m" --seed "$seed" --out "$logs/libauc_$i" \
            > "$logs/libauc_${m}_$i.log" 2>&1
    done
done
"$py" - "$logs" "$n" "$methods" "$epochs" <<'EOF'
import json, statistics, sys
logs, n, methods, epochs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
print("| method | passes | pair | ours s | LibAUC s | ratio | ours test AUC | LibAUC test AUC |")
print("|---|---|---|---|---|---|---|---|")
for m in methods:
    ratios = []
    for i in range(1, n + 1):
        ours = json.load(open(f"{logs}/ours_{m}_{i}/summary.json"))
        last = ours["history"][-1]
        lib = json.load(open(f"{logs}/libauc_{i}/{m}/summary.json"))
        r = last["seconds"] / lib["train_seconds"]
        ratios.append(r)
        print(f"| {m} | {epochs} | {i} | {last['seconds']:.1f} | {lib['train_seconds']:.1f} "
              f"| {r:.2f}x | {ours['best']['test_auc']:.4f} | {lib['best_test_auc']:.4f} |")
    print(f"| {m} | {epochs} | median | | | **{statistics.median(ratios):.2f}x** | | |")
EOF
