#!/usr/bin/env bash
# Issue 42's comparison, re-run for issue 56: STACO, PAUCI and UPAUCI (each in both of its
# forms: PAUCI's gamma by the paper's ascent and by the released code's descent, UPAUCI's
# weights by the paper's gradient step and by the exact step) against CE, SOTA-s and LibAUC
# 2.0.1's STACO and SOTA-s, three seeds on full long-tailed sets (ResNet-20, batch 32 of 16 +
# 16, EPOCHS passes, 2 threads, one run at a time, Adam's epsilon PyTorch's 1e-8 on both
# sides), then one table of mean (std) over seeds of pAUC[0, 0.3], pAUC[0.05, 0.5] and the
# two-way pAUC (TPR >= 0.7, FPR <= 0.3) (benches/peers/frontier_table.py).
#
#   bash benches/peers/frontier_seeds.sh [PYTHON] [OUT] [EPOCHS] [DATASETS] [SEEDS] [LRS] [METHODS]
#
# LRS (default "1e-3", every method's default) is the grid: with several, every method runs at
# each learning rate on the first seed, the one with the best validation pAUC[0.05, 0.5] (the
# runs' own model selection) is kept per data set and method, and the other seeds run only it;
# the same number of points for every method. With PER_SEED_GRID=1 every seed runs the whole
# grid and each seed keeps its own best rate per method (frontier_table.py --per-seed): a rate
# chosen on one seed can collapse on another (issue 42's shirts), at three times the runs.
# METHODS (ours) default "ce sota-s staco pauci pauci-descent upauci upauci-exact":
# pauci is `--method pauci --gamma-step ascent` (the paper's; named, as the library's default
# is descent since issue 56's grids), pauci-descent `--gamma-step descent`, upauci-exact
# `--method upauci --weight-step exact` (method_args.sh).
# OUT (default out/frontier) holds DATA/seedS/{split.json,ours/M,libauc/M} (at another lr X:
# ours@lrX/M, libauc@lrX/M) and table.md; a finished run is kept on a second call, so an
# interrupted sweep continues where it stopped.
# DATASETS default "fashion-mnist mnist fashion-mnist:6": DATA or DATA:CLASS (the positive
# class, default 3: dresses, the digit 3; fashion-mnist:6, shirts, is the harder task, in
# OUT/fashion-mnist-6). SEEDS default "0 1 2". With DIGEST=FILE (frontier_table.py --digest)
# the runs FILE holds are not run again, the finished ones are added to it, and the table is
# made from it: a sweep carried over to a fresh machine by committing FILE. The binaries are
# copied to OUT/bin first, so that a rebuild during the sweep does not change them. Measured on
# this project's 2-core machine: about 2 minutes per run, 20 per data set and seed at one rate.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-/work/venv-torch/bin/python}"
out="${2:-out/frontier}"
epochs="${3:-2}"
# Adam's epsilon of our runs: PyTorch's 1e-8 as on LibAUC's side (issue 56); the tables
# measured before 2026-11-28 ran Burn's 1e-5 (ADAM_EPSILON=1e-5 reproduces them).
eps="${ADAM_EPSILON:-1e-8}"
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
lrs="${6:-1e-3}"
ours="${7:-ce sota-s staco pauci pauci-descent upauci upauci-exact}"
# shellcheck source=benches/peers/method_args.sh
source benches/peers/method_args.sh
# The folder of one run's method group: ours or libauc, with @lrX unless X is the default.
group() { if [ "$2" = 1e-3 ]; then echo "$1"; else echo "$1@lr$2"; fi; }
digest="${DIGEST:-}"
# done_run KEY FOLDER: the run finished here, or its figures are in DIGEST.
done_run() {
    [ -f "$2/summary.json" ] || { [ -n "$digest" ] && [ -f "$digest" ] && grep -qF "\"$1\":" "$digest"; }
}
# run_seed NAME DATA POSITIVE SEED "METHOD:LR ..." "LIBAUC-METHOD:LR ..."
run_seed() {
    local dir="$out/$1/seed$4" m lr
    mkdir -p "$dir"
    local task=(--data "$2" --positive "$3" --seed "$4")
    [ -f "$dir/split.json" ] || "$out/bin/export_split" "${task[@]}" --json "$dir/split.json"
    for pair in $5; do
        m="${pair%%:*}" lr="${pair#*:}"
        local key="$1/seed$4/$(group ours "$lr")/$m"
        local run="$out/$key"
        done_run "$key" "$run" && continue
        echo "== $1 seed $4: ours $m lr $lr"
        # shellcheck disable=SC2046
        RAYON_NUM_THREADS=2 "$out/bin/cifar_lt" "${task[@]}" --epochs "$epochs" \
            $(method_args "$m") --lr "$lr" --adam-epsilon "$eps" --out "$run" --quiet \
            --bootstrap 0
    done
    for lr in $lrs; do
        local missing=() g
        g="$(group libauc "$lr")"
        for pair in $6; do
            [ "${pair#*:}" = "$lr" ] || continue
            m="${pair%%:*}"
            done_run "$1/seed$4/$g/$m" "$dir/$g/$m" || missing+=("$m")
        done
        [ ${#missing[@]} -gt 0 ] || continue
        echo "== $1 seed $4: LibAUC ${missing[*]} lr $lr"
        "$py" benches/peers/libauc_side_by_side.py --split "$dir/split.json" \
            --data-dir "datasets/test-data/$2" --epochs "$epochs" --threads 2 --lr "$lr" \
            --methods "$(IFS=,; echo "${missing[*]}")" --seed "$4" --out "$dir/$g" \
            > "$dir/$g.log" 2>&1
    done
}
grid() { local p=""; for m in $1; do for lr in $lrs; do p="$p $m:$lr"; done; done; echo "$p"; }
for entry in $datasets; do
    data="${entry%%:*}"
    positive=3
    name="$data"
    if [ "$entry" != "$data" ]; then
        positive="${entry#*:}"
        name="$data-$positive"
    fi
    first=""
    for seed in $seeds; do
        if [ -z "$first" ] || [ "${PER_SEED_GRID:-0}" = 1 ]; then
            first="$seed"
            run_seed "$name" "$data" "$positive" "$seed" \
                "$(grid "$ours")" "$(grid "staco sota-s")"
            continue
        fi
        chosen="$(python3 benches/peers/frontier_table.py --out "$out" --choose "$name" \
            --first-seed "$first" ${digest:+--digest "$digest"})"
        run_seed "$name" "$data" "$positive" "$seed" \
            "$(echo "$chosen" | awk '$1 == "ours" {print $2 ":" $3}')" \
            "$(echo "$chosen" | awk '$1 == "libauc" {print $2 ":" $3}')"
    done
done
flags=()
[ "${PER_SEED_GRID:-0}" = 1 ] && flags+=(--per-seed)
[ -n "$digest" ] && flags+=(--digest "$digest" --validation)
python3 benches/peers/frontier_table.py --out "$out" --rankrisk "$out/bin/rankrisk" \
    "${flags[@]}" | tee "$out/table.md"
