#!/usr/bin/env bash
# The pAUC objectives after a warm-up with CE, at an equal budget (issue 42): for each data set
# and seed, one pass of CE (`OUT/NAME/seedS/warm-ce/ce`), then one pass of each method started
# from CE's best model (`--init-model .../ce/best.bpk`, into `OUT/NAME/seedS/warm-ce/METHOD`):
# two passes in all, as the 2-pass runs of frontier_seeds.sh, whose folders and splits it
# shares. benches/peers/frontier_table.py prints these runs as "ours METHOD after CE".
#
#   bash benches/peers/warm_start.sh [OUT] [DATASETS] [SEEDS] [METHODS] [LR]
#
# DATASETS as frontier_seeds.sh's ("fashion-mnist:6" for shirts), SEEDS default "0 1 2",
# METHODS default "upauci upauci-exact pauci pauci-descent" (frontier_seeds.sh's names), LR
# (every run's step size) default 1e-3; Adam's epsilon is PyTorch's 1e-8, as in
# frontier_seeds.sh. The binaries are copied to OUT/bin-warm first.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-out/frontier}"
datasets="${2:-fashion-mnist:6}"
seeds="${3:-0 1 2}"
methods="${4:-upauci upauci-exact pauci pauci-descent}"
lr="${5:-1e-3}"
# shellcheck source=benches/peers/method_args.sh
source benches/peers/method_args.sh
# Adam's epsilon of our runs: PyTorch's 1e-8 as on LibAUC's side (issue 56); the tables
# measured before 2026-11-28 ran Burn's 1e-5 (ADAM_EPSILON=1e-5 reproduces them).
eps="${ADAM_EPSILON:-1e-8}"
cargo build --release --example cifar_lt
mkdir -p "$out/bin-warm"
[ -x "$out/bin-warm/cifar_lt" ] || cp target/release/examples/cifar_lt "$out/bin-warm/"
for entry in $datasets; do
    data="${entry%%:*}" positive=3 name="${entry%%:*}"
    if [ "$entry" != "$data" ]; then
        positive="${entry#*:}"
        name="$data-$positive"
    fi
    for seed in $seeds; do
        dir="$out/$name/seed$seed/warm-ce"
        task=(--data "$data" --positive "$positive" --seed "$seed" --lr "$lr" --quiet
            --bootstrap 0 --epochs 1 --adam-epsilon "$eps")
        if [ ! -f "$dir/ce/summary.json" ]; then
            echo "== $name seed $seed: ce, 1 pass"
            RAYON_NUM_THREADS=2 "$out/bin-warm/cifar_lt" "${task[@]}" --method ce --out "$dir/ce"
        fi
        for m in $methods; do
            [ -f "$dir/$m/summary.json" ] && continue
            echo "== $name seed $seed: $m, 1 pass after ce"
            # shellcheck disable=SC2046
            RAYON_NUM_THREADS=2 "$out/bin-warm/cifar_lt" "${task[@]}" $(method_args "$m") \
                --init-model "$dir/ce/best.bpk" --out "$dir/$m"
        done
    done
done
