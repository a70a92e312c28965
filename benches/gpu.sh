#!/usr/bin/env bash
# The GPU figures in one command (issue 43): on a machine with an NVIDIA GPU, its Vulkan driver
# and PyTorch with CUDA, times side by side
#   - a training step of ResNet-20 (1 x 28 x 28, batch 32; 3 x 32 x 32, batch 128) and of
#     DenseNet121 (3 x 224 x 224, batch 32): ours on wgpu (`bench_step`; the first step, with
#     shader compilation and autotuning, apart), with fusion and, given a second build, without;
#     PyTorch's on CUDA (`benches/peers/torch_step.py --device cuda --optim adam`);
#   - the peak GPU memory of each (nvidia-smi's memory.used sampled every 100 ms, less its value
#     before the run; PyTorch's own max_memory_allocated as well);
#   - the CPU side of each objective per step (`bench_objectives`: batch 32, 256, 2048);
#   - one pass of CE and of SOTA-s on full Fashion-MNIST-LT (`cifar_lt --backend wgpu`,
#     LibAUC's loop on CUDA: `benches/peers/libauc_side_by_side.py --device cuda`),
# then one table (benches/gpu_table.py), in OUT/table.md.
#
#   bash benches/gpu.sh [--bin DIR] [--bin-nofusion DIR] [--python PY] [--out DIR]
#                       [--no-epochs] [--tiny]
#
# --bin: where rankrisk, bench_step, bench_objectives and cifar_lt are (directly or in
#   examples/; default target/release), built with `--features wgpu,fusion` (the "fusion"
#   column; docs/BACKENDS.md). The binaries built on a CPU-only machine run here:
#   docs/BACKENDS.md says what the GPU machine needs (libvulkan1 and the NVIDIA driver's
#   Vulkan ICD; no Rust toolchain, no network).
# --bin-nofusion: a build without fusion (`cargo build --release --features wgpu
#   --example bench_step --target-dir target/no-fusion`, then
#   target/no-fusion/release); without it that column stays empty. The passes also need
#   cifar_lt and export_split, and the data (bash datasets/fetch-test-data.sh, or carried).
# --python: a Python with torch (CUDA) and, for the passes, libauc 2.0.1 and torchvision
#   (default: python3). Without CUDA in it, PyTorch's columns stay empty and say why.
# --tiny: tiny shapes, 2 timed steps, no passes, and any wgpu adapter (lavapipe): the CI check
#   of this script (tests/gpu_script.rs).
# The wgpu device is wgpu's high-performance adapter unless CUBECL_WGPU_DEFAULT_DEVICE names one
# (e.g. DiscreteGpu(1)). Exit status: 3 when no GPU adapter is found (without --tiny), 2 for
# bad arguments or a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release
bin_nofusion=""
py=python3
out=out/gpu
epochs=1
tiny=0
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin="${2:?--bin needs a folder}"; shift 2 ;;
        --bin-nofusion) bin_nofusion="${2:?--bin-nofusion needs a folder}"; shift 2 ;;
        --python) py="${2:?--python needs a program}"; shift 2 ;;
        --out) out="${2:?--out needs a folder}"; shift 2 ;;
        --no-epochs) epochs=0; shift ;;
        --tiny) tiny=1; epochs=0; shift ;;
        -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "benches/gpu.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
    esac
done

# find DIR NAME: DIR/NAME or DIR/examples/NAME, else nothing.
find_bin() {
    for p in "$1/$2" "$1/examples/$2"; do
        if [ -x "$p" ]; then echo "$p"; return 0; fi
    done
    return 0
}
rankrisk="$(find_bin "$bin" rankrisk)"
bench_step="$(find_bin "$bin" bench_step)"
bench_objectives="$(find_bin "$bin" bench_objectives)"
cifar_lt="$(find_bin "$bin" cifar_lt)"
export_split="$(find_bin "$bin" export_split)"
for pair in "rankrisk:$rankrisk" "bench_step:$bench_step" "bench_objectives:$bench_objectives"; do
    if [ -z "${pair#*:}" ]; then
        echo "benches/gpu.sh: no ${pair%%:*} in $bin or $bin/examples (cargo build --release" \
            "--bin rankrisk --example bench_step --example bench_objectives --example cifar_lt)" >&2
        exit 2
    fi
done
nofusion_step=""
if [ -n "$bin_nofusion" ]; then
    nofusion_step="$(find_bin "$bin_nofusion" bench_step)"
    [ -n "$nofusion_step" ] || { echo "benches/gpu.sh: no bench_step in $bin_nofusion" >&2; exit 2; }
fi

# The adapter: wgpu's list from `rankrisk info`.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
info="$("$rankrisk" info 2>&1 || true)"
if echo "$info" | grep -q '^wgpu: not compiled'; then
    echo "benches/gpu.sh: $rankrisk was built without wgpu: build with --features wgpu" \
        "(and the GPU features docs/BACKENDS.md recommends)" >&2
    exit 2
fi
adapters="$(echo "$info" | sed -n '/^wgpu adapters/,$p' | grep '^  - ' || true)"
if ! echo "$adapters" | grep -q 'type: \(DiscreteGpu\|IntegratedGpu\)'; then
    if [ "$tiny" = 0 ]; then
        echo "benches/gpu.sh: wgpu finds no GPU adapter, so there is nothing to time." >&2
        echo "Adapters seen:" >&2
        echo "${adapters:-  (none)}" >&2
        echo "It needs an NVIDIA (or other) GPU with its Vulkan driver: libvulkan1 and the" \
            "driver's ICD (docs/BACKENDS.md). On lavapipe, --tiny checks the script." >&2
        exit 3
    fi
fi
adapter="$(echo "$adapters" | head -1 | sed 's/^  - //')"
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.mem "$out"/table.md
{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "adapter: ${adapter:-none}"
    echo "CUBECL_WGPU_DEFAULT_DEVICE: ${CUBECL_WGPU_DEFAULT_DEVICE:-unset}"
    command -v nvidia-smi >/dev/null 2>&1 &&
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
        sed 's/^/gpu: /'
    echo "$info" | grep -i '^rankrisk\|^burn\|autotune\|fusion' || true
} > "$out/machine.txt"

# with_memory FILE CMD...: run CMD, sampling nvidia-smi's memory.used (MiB) into FILE.
with_memory() {
    local file="$1" sampler="" rc=0
    shift
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 > "$file"
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 -lms 100 \
            >> "$file" 2>/dev/null &
        sampler=$!
    fi
    "$@" || rc=$?
    [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
    return "$rc"
}

if [ "$tiny" = 1 ]; then
    # Two ResNet-20 shapes (one and three channels): DenseNet121 at 32 px took 74 s of the
    # run's 80 on lavapipe (issue 70); it runs on wgpu in tests/models.rs and the agreement test.
    shapes="resnet20:1:8:2 resnet20:3:8:2"
    timing=(--repeats 2 --warmup 1)
else
    shapes="resnet20:1:28:32 resnet20:3:32:128 densenet121:3:224:32"
    timing=(--repeats 20 --warmup 3)
fi
torch_ok=1
torch_why=""
if ! torch_why="$("$py" -c 'import torch, torchvision
assert torch.cuda.is_available(), "torch " + torch.__version__ + " sees no CUDA device"' 2>&1)"; then
    torch_ok=0
    torch_why="$(echo "$torch_why" | tail -1)"
    echo "PyTorch: $torch_why" > "$out/torch.skipped"
fi
for shape in $shapes; do
    IFS=: read -r model channels size batch <<< "$shape"
    tag="$model-${channels}x${size}-b$batch"
    args=(--backends wgpu --models "$model" --channels "$channels" --size "$size"
        --batch "$batch" --ours-only "${timing[@]}")
    echo "== $tag: ours (wgpu, fusion)"
    with_memory "$out/ours-fusion-$tag.mem" \
        "$bench_step" "${args[@]}" --json "$out/ours-fusion-$tag.json"
    if [ -n "$nofusion_step" ]; then
        echo "== $tag: ours (wgpu, no fusion)"
        with_memory "$out/ours-nofusion-$tag.mem" \
            "$nofusion_step" "${args[@]}" --json "$out/ours-nofusion-$tag.json"
    fi
    if [ "$torch_ok" = 1 ]; then
        echo "== $tag: PyTorch (CUDA)"
        with_memory "$out/torch-$tag.mem" \
            "$py" benches/peers/torch_step.py --device cuda --optim adam --model "$model" \
            --channels "$channels" --size "$size" --batch "$batch" "${timing[@]}" \
            --json "$out/torch-$tag.json"
    fi
done
echo "== the objectives' CPU side"
if [ "$tiny" = 1 ]; then
    "$bench_objectives" --batches 32 --repeats 3 > "$out/objectives.md"
else
    "$bench_objectives" > "$out/objectives.md"
fi
if [ "$epochs" = 1 ]; then
    if [ -z "$cifar_lt" ] || [ -z "$export_split" ]; then
        echo "benches/gpu.sh: the passes need cifar_lt and export_split in $bin (or --no-epochs)" >&2
        exit 2
    fi
    for m in ce sota-s; do
        echo "== one pass of $m on full Fashion-MNIST-LT: ours (wgpu)"
        with_memory "$out/pass-ours-$m.mem" "$cifar_lt" --data fashion-mnist --backend wgpu \
            --method "$m" --epochs 1 --seed 0 --quiet --bootstrap 0 --out "$out/pass/ours/$m"
    done
    "$export_split" --data fashion-mnist --seed 0 --json "$out/pass/split.json"
    if [ "$torch_ok" = 1 ]; then
        echo "== one pass of ce, sota-s: LibAUC (CUDA)"
        with_memory "$out/pass-libauc.mem" "$py" benches/peers/libauc_side_by_side.py \
            --split "$out/pass/split.json" --data-dir datasets/test-data/fashion-mnist \
            --epochs 1 --device cuda --methods ce,sota-s --seed 0 --out "$out/pass/libauc" \
            > "$out/pass/libauc.log" 2>&1
    fi
fi
python3 benches/gpu_table.py "$out" | tee "$out/table.md"
