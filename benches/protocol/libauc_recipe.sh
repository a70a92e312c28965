#!/usr/bin/env bash
# Issue 68, step (5): LibAUC's recipe on shirts, ours and LibAUC's, three seeds. The recipe is
# LibAUC 2.0.1's SOPA-s tutorial's (examples/python/sopas_tutorial.py runs its loop): Adam,
# weight decay 5e-4, batch 64, half of each batch positive, the rate divided by 10 at one third
# and two thirds of the run, SOPA-s on sigmoid outputs; at a budget two cores allow: EPOCHS
# (default 12, so the decays come after passes 4 and 8) instead of the tutorial's 60. For each
# seed, five runs on the same split and the same initial model:
#   ce        cross-entropy in the same loop and recipe (the baseline), its last model kept
#   libauc    LibAUC's pAUC_DRO_Loss + SOPAs, from scratch
#   rankrisk  rankrisk.torch.SOPAs, from scratch
#   libauc, rankrisk from ce   the same, started from that seed's CE model (LibAUC's
#             tutorials' "from a CE-trained model")
#
#   bash benches/protocol/libauc_recipe.sh [OUT] [DATA:CLASS] [SEEDS]
#
# OUT (default out/recipe68) holds DATA-CLASS/seedS/{split.json,RUN.json,RUN.log,ce.pt}; a run
# whose JSON exists is kept, so an interrupted sweep continues where it stopped (a run cut
# short starts again). PYTHON (default /work/venv-torch/bin/python) has torch, libauc==2.0.1
# and this checkout's wheel; THREADS (default 2) torch threads a run; MAX_STEPS caps a pass's
# steps (a smoke run). Ends with the table of the runs done.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${PYTHON:-/work/venv-torch/bin/python}"
out="${1:-out/recipe68}"
spec="${2:-fashion-mnist:6}"
seeds="${3:-0 1 2}"
epochs="${EPOCHS:-12}"
threads="${THREADS:-2}"
data="${spec%%:*}" pos="${spec#*:}"
[ "$spec" != "$data" ] || pos=3
[ -x target/release/examples/export_split ] || cargo build --release --example export_split
tutorial=(examples/python/sopas_tutorial.py --epochs "$epochs" --threads "$threads")
# MAX_STEPS caps the steps of a pass (a smoke run).
[ -z "${MAX_STEPS:-}" ] || tutorial+=(--max-steps "$MAX_STEPS")
runs=(ce libauc rankrisk libauc-from-ce rankrisk-from-ce)
for seed in $seeds; do
    dir="$out/$data-$pos/seed$seed"
    mkdir -p "$dir"
    [ -f "$dir/split.json" ] || target/release/examples/export_split --data "$data" \
        --positive "$pos" --seed "$seed" --json "$dir/split.json"
    # run NAME LIBRARY [FLAGS...]
    run() {
        local name="$1" lib="$2"
        shift 2
        [ -f "$dir/$name.json" ] && return 0
        echo "== $data-$pos/seed$seed/$name $(date +%H:%M:%S)"
        "$py" "${tutorial[@]}" --library "$lib" --split "$dir/split.json" --seed "$seed" \
            --out "$dir/$name.json" "$@" > "$dir/$name.log" 2>&1 \
            || { tail -5 "$dir/$name.log" >&2; exit 1; }
    }
    [ -f "$dir/ce.pt" ] || rm -f "$dir/ce.json"
    run ce ce --save-model "$dir/ce.pt"
    run libauc libauc
    run rankrisk rankrisk
    run libauc-from-ce libauc --init "$dir/ce.pt"
    run rankrisk-from-ce rankrisk --init "$dir/ce.pt"
done
done_runs=()
for seed in $seeds; do
    for name in "${runs[@]}"; do
        f="$out/$data-$pos/seed$seed/$name.json"
        [ -f "$f" ] && done_runs+=("$f")
    done
done
"$py" examples/python/sopas_tutorial.py --table "${done_runs[@]}"
