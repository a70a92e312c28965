#!/usr/bin/env bash
# Issue 68: the seed pAUC paper's deep protocol (section 5, Appendix E.6) on the long-tailed
# sets that are here: ResNet-20 from scratch, 10 epochs, batch 32, each method with its own
# recipe, its rate (and AGD-SBCD's gamma) chosen on the first seed's validation pAUC[0.05, 0.5]
# from three values, the best model over all evaluation points (one per epoch), then the other
# seeds at the choice. The recipes:
#   ce    Adam, the rate divided by 10 after epoch 5           rates 1e-4 1e-3 1e-2
#   aucm  PESG (SGD + its terms), the same decay, gamma 500    rates 0.01 0.1 1
#   mb    SGD, lr / sqrt(t) (Kar et al. 2014)                  rates 0.1 0.3 1
#   sbcd  AGD-SBCD's own steps, T_k = 50 (k+1)^2, mu 1e3       c 0.01 0.1 1 at gamma 1e3,
#         / (N+ N-); then gamma {0.1, 2} x 1e3 at the chosen c (the paper's three values)
# and the field's best at the same budget, selection and decay, each at its defaults (Adam
# 1e-3, the rate divided by 10 after epoch 5; METHODS="sota-s staco pauci upauci"):
#   sota-s staco pauci upauci                                  rate 1e-3
#
#   bash benches/protocol/paper_protocol.sh [OUT] [DATASETS] [SEEDS] [METHODS]
#
# OUT (default out/protocol68) holds DATA/seedS/METHOD@lrX (AGD-SBCD: sbcd@lrX,gY) run
# folders. DATASETS default "fashion-mnist:6" (shirts; DATA:CLASS, fashion-mnist:3 dresses,
# mnist:3), SEEDS "0 1 2", METHODS "ce aucm mb sbcd". DIGEST=FILE keeps each finished run's
# figures (benches/protocol/protocol_table.py --digest) and skips the runs it holds, so a sweep
# carries over machines by committing FILE; a run folder with a checkpoint and no summary
# continues with --resume. Adam's epsilon is PyTorch's 1e-8 (ADAM_EPSILON overrides), as the
# LibAUC comparisons run. The binary is copied to OUT/bin first, so a rebuild during the sweep
# does not change it. About 8 minutes per run on this project's 2 cores (full
# Fashion-MNIST-LT). THREADS (default 2) is each run's thread count: the figures do not depend
# on it (a run of 2 epochs over 3,000 images wrote the same scores at 1 and at 2 threads, in
# 37.8 s and 24.5 s alone), so two sweeps of disjoint METHODS at THREADS=1 side by side keep
# the two cores busier than one at 2; they share DIGEST under a lock (OUT/digest.lock).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-out/protocol68}"
datasets="${2:-fashion-mnist:6}"
seeds="${3:-0 1 2}"
methods="${4:-ce aucm mb sbcd}"
eps="${ADAM_EPSILON:-1e-8}"
digest="${DIGEST:-}"
threads="${THREADS:-2}"
mkdir -p "$out/bin"
# Every read-and-write of the digest under one lock (sweeps side by side, THREADS above).
table=(flock "$out/digest.lock" python3 benches/protocol/protocol_table.py --out "$out")
[ -n "$digest" ] && table+=(--digest "$digest")
[ -x "$out/bin/cifar_lt" ] || cp target/release/examples/cifar_lt "$out/bin/"

# The recipe flags and the rate grid of each method.
recipe() {
    case "$1" in
        ce | aucm | sota-s | staco | pauci | upauci)
            echo "--method $1 --lr-schedule step --decay-epochs 5" ;;
        mb) echo "--method mb --lr-schedule inverse-sqrt" ;;
        sbcd) echo "--method sbcd" ;;
        *) echo "paper_protocol: unknown method $1" >&2; exit 2 ;;
    esac
}
rates() {
    case "$1" in
        ce) echo "1e-4 1e-3 1e-2" ;;
        aucm) echo "0.01 0.1 1" ;;
        mb) echo "0.1 0.3 1" ;;
        sbcd) echo "0.01 0.1 1" ;;
        sota-s | staco | pauci | upauci) echo "1e-3" ;;
    esac
}

# run DATA_NAME DATA CLASS SEED METHOD LR [GAMMA]: one run, unless it finished (here or in
# the digest); an interrupted one resumes.
run() {
    local name="$1" data="$2" pos="$3" seed="$4" m="$5" lr="$6" g="${7:-}"
    local label="$m@lr$lr"
    local extra=()
    if [ -n "$g" ]; then label="$label,g$g"; extra=(--gamma-scale "$g"); fi
    local key="$name/seed$seed/$label" dir="$out/$name/seed$seed/$label"
    [ -f "$dir/summary.json" ] && return 0
    if [ -n "$digest" ] && [ -f "$digest" ] && grep -qF "\"$key\":" "$digest"; then return 0; fi
    local resume=()
    [ -f "$dir/checkpoint/state.cbor" ] && resume=(--resume)
    echo "== $key $(date +%H:%M:%S)"
    # shellcheck disable=SC2046
    RAYON_NUM_THREADS="$threads" "$out/bin/cifar_lt" --data "$data" --positive "$pos" \
        --seed "$seed" --epochs 10 --batch 32 $(recipe "$m") --lr "$lr" "${extra[@]}" \
        --adam-epsilon "$eps" --bootstrap 0 --quiet --out "$dir" "${resume[@]}"
    [ -z "$digest" ] || "${table[@]}" --update >/dev/null
}

first="${seeds%% *}"
for spec in $datasets; do
    data="${spec%%:*}" pos=3
    [ "$spec" = "$data" ] || pos="${spec#*:}"
    name="$data-$pos"
    # The grid on the first seed.
    for m in $methods; do
        for lr in $(rates "$m"); do run "$name" "$data" "$pos" "$first" "$m" "$lr"; done
    done
    if [[ " $methods " == *" sbcd "* ]]; then
        # The chosen c at gamma 1e3 (once the gamma runs exist the choice names one of them).
        c=$("${table[@]}" --choose "$name" --method sbcd)
        c="${c%%,*}"
        for g in 100 2000; do run "$name" "$data" "$pos" "$first" sbcd "$c" "$g"; done
    fi
    # The other seeds at each method's choice.
    for seed in $seeds; do
        [ "$seed" = "$first" ] && continue
        for m in $methods; do
            choice=$("${table[@]}" --choose "$name" --method "$m")
            lr="${choice%%,*}" g=""
            [ "$choice" = "$lr" ] || g="${choice#*,g}"
            run "$name" "$data" "$pos" "$seed" "$m" "$lr" "$g"
        done
    done
done
"${table[@]}"
