#!/usr/bin/env bash
# Our training step against PyTorch's, alternated N times back to back (ResNet-20, 1 x 28 x 28,
# batch 32, Adam, 2 threads each): `bench_step --ours-only` on flex, then torch_step.py, and a
# line per pair with our driver's step, our bare Burn step and PyTorch's step (median ms of 20
# steps each). docs/SPEED.md's ratios come from it.
#
#   bash benches/peers/step_pairs.sh [PYTHON] [N] [LOGDIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-/work/venv-torch/bin/python}"
n="${2:-6}"
logs="${3:-out/step-pairs}"
mkdir -p "$logs"
cargo build --release --example bench_step
for i in $(seq 1 "$n"); do
    RAYON_NUM_THREADS=2 target/release/examples/bench_step --backends flex --repeats 20 \
        --warmup 3 --ours-only > "$logs/ours_$i.txt" 2>&1
    "$py" benches/peers/torch_step.py --model resnet20 --channels 1 --size 28 --batch 32 \
        --threads 2 --optim adam --repeats 20 --warmup 3 > "$logs/torch_$i.txt" 2>&1
done
for i in $(seq 1 "$n"); do
    driver=$(grep "rankrisk (CE) | step" "$logs/ours_$i.txt" | awk -F'|' '{print $6}')
    bare=$(grep "bare Burn, our kernels | step" "$logs/ours_$i.txt" | awk -F'|' '{print $6}')
    torch=$(grep "^| step" "$logs/torch_$i.txt" | awk -F'|' '{print $3}')
    echo "pair $i: driver $driver ms, bare $bare ms, PyTorch $torch ms"
done
