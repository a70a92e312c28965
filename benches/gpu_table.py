"""The table of benches/gpu.sh from its folder: per shape, the training step of ours on wgpu
(with fusion, and without where a second build ran) against PyTorch on CUDA, the first step
apart, the peak GPU memory; the objectives' CPU side; one pass of CE and SOTA-s on full
Fashion-MNIST-LT. Missing runs print "-" (and the reason where gpu.sh wrote one).

    python3 benches/gpu_table.py out/gpu
"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def peak_mib(path):
    """nvidia-smi's memory.used at its highest during the run less before it, or None."""
    try:
        with open(path) as f:
            v = [float(x) for x in f.read().split() if x.strip()]
    except (OSError, ValueError):
        return None
    return max(v) - v[0] if len(v) > 1 else None


def ours_row(rows, phase):
    for r in rows or []:
        if r["path"] == "rankrisk (CE)" and r["phase"] == phase:
            return r
    return None


def fmt_ms(r):
    return "-" if r is None else f"{r['median_ms']:.2f} ({r['iqr_ms']:.2f})"


def fmt_first(r):
    return "-" if r is None else f"{r['median_ms'] / 1e3:.2f}"


def fmt_mib(v):
    return "-" if v is None else f"{v:.0f}"


def step_table(out):
    # In the order gpu.sh ran them.
    paths = sorted(glob.glob(os.path.join(out, "ours-fusion-*.json")), key=os.path.getmtime)
    tags = [os.path.basename(p)[len("ours-fusion-"):-len(".json")] for p in paths]
    print("| model, input, batch | ours wgpu + fusion: step ms (IQR) | first step s | peak MiB "
          "| read-back ms | ours wgpu, no fusion: step ms | first step s | peak MiB "
          "| PyTorch CUDA: step ms (IQR) | first step s | peak MiB (smi / allocator) "
          "| ours / PyTorch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for tag in tags:
        fus = load(os.path.join(out, f"ours-fusion-{tag}.json"))
        nof = load(os.path.join(out, f"ours-nofusion-{tag}.json"))
        tor = load(os.path.join(out, f"torch-{tag}.json"))
        step_f, step_n = ours_row(fus, "step"), ours_row(nof, "step")
        t_step = tor["results"]["step"] if tor else None
        t_first = tor["results"].get("first step") if tor else None
        smi = peak_mib(os.path.join(out, f"torch-{tag}.mem"))
        alloc = tor.get("peak_memory_mib") if tor else None
        ratio = "-"
        if step_f and t_step:
            ratio = f"{step_f['median_ms'] / t_step['median_ms']:.2f}x"
        print(f"| {tag} | {fmt_ms(step_f)} | {fmt_first(ours_row(fus, 'first step (compilation, tuning)'))} "
              f"| {fmt_mib(peak_mib(os.path.join(out, f'ours-fusion-{tag}.mem')))} "
              f"| {fmt_ms(ours_row(fus, 'score read-back'))} "
              f"| {fmt_ms(step_n)} | {fmt_first(ours_row(nof, 'first step (compilation, tuning)'))} "
              f"| {fmt_mib(peak_mib(os.path.join(out, f'ours-nofusion-{tag}.mem')))} "
              f"| {fmt_ms(t_step)} | {fmt_first(t_first)} | {fmt_mib(smi)} / {fmt_mib(alloc)} "
              f"| {ratio} |")


def pass_table(out):
    rows = []
    for m in ("ce", "sota-s"):
        ours = load(os.path.join(out, "pass", "ours", m, "summary.json"))
        lib = load(os.path.join(out, "pass", "libauc", m, "summary.json"))
        o_s = ours["history"][0]["seconds"] if ours else None
        o_auc = ours["history"][0]["test_auc"] if ours else None
        l_s = lib["train_seconds"] if lib else None
        l_auc = lib["epochs"][0]["test_auc"] if lib else None
        rows.append((m, o_s, o_auc, l_s, l_auc))
    if all(r[1] is None and r[3] is None for r in rows):
        return
    print("\nOne pass on full Fashion-MNIST-LT (dresses, seed 0, batch 32):\n")
    print("| method | ours wgpu: training s | test AUC | LibAUC CUDA: training s | test AUC | ratio |")
    print("|---|---|---|---|---|---|")
    f = lambda v, d: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    for m, o_s, o_auc, l_s, l_auc in rows:
        ratio = f"{o_s / l_s:.2f}x" if o_s and l_s else "-"
        print(f"| {m} | {f(o_s, 1)} | {f(o_auc, 4)} | {f(l_s, 1)} | {f(l_auc, 4)} | {ratio} |")


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: python3 benches/gpu_table.py OUT (the folder benches/gpu.sh wrote)")
    out = sys.argv[1]
    try:
        print(open(os.path.join(out, "machine.txt")).read().strip() + "\n")
    except OSError:
        pass
    step_table(out)
    skipped = os.path.join(out, "torch.skipped")
    if os.path.exists(skipped):
        print("\n" + open(skipped).read().strip())
    pass_table(out)
    objectives = os.path.join(out, "objectives.md")
    if os.path.exists(objectives):
        print("\nThe objectives' CPU side per step (bench_objectives):\n")
        print(open(objectives).read().strip())


if __name__ == "__main__":
    main()
