#!/usr/bin/env bash
# Issue 42's comparison: STACO, PAUCI and UPAUCI against CE, SOTA-s and LibAUC 2.0.1's STACO and
# SOTA-s, three seeds on two full long-tailed sets (ResNet-20, batch 32 of 16 + 16, EPOCHS
# passes, 2 threads, one run at a time, each method at its defaults), then one table of mean
# (std) over seeds of pAUC[0, 0.3], pAUC[0.05, 0.5] and the two-way pAUC (TPR >= 0.7,
# FPR <= 0.3) (benches/peers/frontier_table.py).
#
#   bash benches/peers/frontier_seeds.sh [PYTHON] [OUT] [EPOCHS] [DATASETS] [SEEDS]
#
# OUT (default out/frontier) holds DATA/seedS/{split.json,ours/M,libauc/M} and table.md; a
# finished run is kept on a second call, so an interrupted sweep continues where it stopped.
# DATASETS default "fashion-mnist mnist fashion-mnist:6": DATA or DATA:CLASS (the positive
# class, default 3: dresses, the digit 3; fashion-mnist:6, shirts, is the harder task, in
# OUT/fashion-mnist-6). SEEDS default "0 1 2". The binaries are copied to
# OUT/bin first, so that a rebuild during the sweep does not change them. Measured on this
# project's 2-core machine: about 10 minutes per data set and seed.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-/work/venv-torch/bin/python}"
out="${2:-out/frontier}"
epochs="${3:-2}"
datasets="${4:-fashion-mnist mnist fashion-mnist:6}"
seeds="${5:-0 1 2}"
if ! "$py" -c 'import torch, numpy, libauc' >/dev/null 2>&1; then
    echo "frontier_seeds: $py cannot import torch, numpy and libauc (benches/peers/README.md)" >&2
    exit 3
fi
cargo build --release --example cifar_lt --example export_split --bin rankrisk
mkdir -p "$out/bin"
for b in examples/cifar_lt examples/export_split rankrisk; do
    [ -x "$out/bin/$(basename $b)" ] || cp "target/release/$b" "$out/bin/"
done
for entry in $datasets; do
    data="${entry%%:*}"
    positive=3
    name="$data"
    if [ "$entry" != "$data" ]; then
        positive="${entry#*:}"
        name="$data-$positive"
    fi
    for seed in $seeds; do
        dir="$out/$name/seed$seed"
        mkdir -p "$dir"
        task=(--data "$data" --positive "$positive" --seed "$seed")
        [ -f "$dir/split.json" ] || "$out/bin/export_split" "${task[@]}" --json "$dir/split.json"
        for m in ce sota-s staco pauci upauci; do
            [ -f "$dir/ours/$m/summary.json" ] && continue
            echo "== $name seed $seed: ours $m"
            RAYON_NUM_THREADS=2 "$out/bin/cifar_lt" "${task[@]}" --epochs "$epochs" \
                --method "$m" --out "$dir/ours/$m" --quiet --bootstrap 0
        done
        missing=()
        for m in staco sota-s; do
            [ -f "$dir/libauc/$m/summary.json" ] || missing+=("$m")
        done
        if [ ${#missing[@]} -gt 0 ]; then
            echo "== $name seed $seed: LibAUC ${missing[*]}"
            "$py" benches/peers/libauc_side_by_side.py --split "$dir/split.json" \
                --data-dir "datasets/test-data/$data" --epochs "$epochs" --threads 2 \
                --methods "$(IFS=,; echo "${missing[*]}")" --seed "$seed" --out "$dir/libauc" \
                > "$dir/libauc.log" 2>&1
        fi
    done
done
python3 benches/peers/frontier_table.py --out "$out" --rankrisk "$out/bin/rankrisk" \
    | tee "$out/table.md"
