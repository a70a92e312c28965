#!/usr/bin/env bash
# Issue 68, step (3): LibAUC 2.0.1's own CE and SOTA-s under the seed paper's protocol, beside
# our sweep (benches/protocol/paper_protocol.sh): the same split (export_split with the
# sweep's data, positive class and seed), ResNet-20 from scratch, 10 passes of batch 32, the
# rate divided by 10 after pass 5 (LibAUC's `update_lr(decay_factor=10)`; torch's Adam for
# CE), one evaluation per pass, the best pass by validation pAUC[0.05, 0.5]; each method at
# LibAUC's defaults (Adam 1e-3), which are the rates our sweep runs CE (chosen on validation)
# and SOTA-s at. LibAUC's own initialization and the script's batch stream
# (benches/peers/libauc_side_by_side.py, `--sampler own`).
#
#   bash benches/protocol/libauc_protocol.sh [OUT] [DATA:CLASS] [SEEDS] [METHODS]
#
# OUT (default out/protocol68-libauc) holds DATA-CLASS/seedS/{split.json,METHOD/}; a method
# whose summary.json exists is kept, so an interrupted sweep continues where it stopped
# (a run cut short starts again: the script has no checkpoints). DATA:CLASS default
# fashion-mnist:6 (shirts), SEEDS "0 1 2", METHODS "ce,sota-s". PYTHON (default
# /work/venv-torch/bin/python) has torch and libauc==2.0.1 (benches/peers/README.md).
# EPOCHS and DECAY (default 10 and 5) shrink it for a smoke run. Ends with the table of
# mean (std) over the seeds done.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${PYTHON:-/work/venv-torch/bin/python}"
out="${1:-out/protocol68-libauc}"
spec="${2:-fashion-mnist:6}"
seeds="${3:-0 1 2}"
methods="${4:-ce,sota-s}"
epochs="${EPOCHS:-10}"
decay="${DECAY:-5}"
data="${spec%%:*}" pos="${spec#*:}"
[ "$spec" != "$data" ] || pos=3
[ -x target/release/examples/export_split ] || cargo build --release --example export_split
for seed in $seeds; do
    dir="$out/$data-$pos/seed$seed"
    mkdir -p "$dir"
    [ -f "$dir/split.json" ] || target/release/examples/export_split --data "$data" \
        --positive "$pos" --seed "$seed" --json "$dir/split.json"
    for m in ${methods//,/ }; do
        [ -f "$dir/$m/summary.json" ] && continue
        echo "== $data-$pos/seed$seed/$m $(date +%H:%M:%S)"
        "$py" benches/peers/libauc_side_by_side.py --split "$dir/split.json" --methods "$m" \
            --seed "$seed" --epochs "$epochs" --batch 32 --decay-epochs "$decay" --threads 2 \
            --out "$dir"
    done
done
python3 - "$out/$data-$pos" "$methods" <<'EOF'
import json, os, statistics, sys
root, methods = sys.argv[1], sys.argv[2].split(",")
print("| LibAUC method | seeds | best pass | best val pAUC[0.05, 0.5] | test pAUC[0.05, 0.5] | test AUC |")
print("|---|---|---|---|---|---|")
for m in methods:
    rows = []
    for seed in sorted(os.listdir(root)):
        p = os.path.join(root, seed, m, "summary.json")
        if os.path.exists(p):
            rows.append(json.load(open(p)))
    if not rows:
        continue
    def ms(key):
        v = [r[key] for r in rows]
        return f"{statistics.mean(v):.4f}" + (f" ({statistics.stdev(v):.4f})" if len(v) > 1 else "")
    passes = ", ".join(str(r["best_epoch"]) for r in rows)
    print(f"| {m} | {len(rows)} | {passes} | {ms('best_val_pauc')} | {ms('best_test_pauc')} | {ms('best_test_auc')} |")
EOF
