#!/usr/bin/env python3
"""PyTorch peer benchmark for rankrisk: per-phase time of one training step.

Measures, on the CPU with torch.set_num_threads(N) (or on a CUDA device with
--device cuda[:N], each phase closed by torch.cuda.synchronize()), the phases of one training
step of CIFAR ResNet-20 (He et al. 2016, option-A shortcuts, 1 output logit) or
torchvision DenseNet121 (num_classes=1):

  forward    model(x) in train mode
  loss       BCE-with-logits on random 0/1 labels (reported separately, tiny)
  backward   loss.backward()
  optimizer  optimizer.step() + optimizer.zero_grad(set_to_none=True)
  step       forward + loss + backward + optimizer, timed as one block

Each phase: median and interquartile range (ms) over --repeats steps after
--warmup untimed steps. The phase timings come from one loop (perf_counter
between phases); "step" comes from a second loop with a single timer around
the whole step.

On CUDA the first step (cuDNN's kernel choice and allocations) is timed apart ("first step")
and the peak of torch.cuda.max_memory_allocated() is reported ("peak memory MiB").

--profile instead sums torch.profiler's self CPU time per layer type over the step
(convolution forward / backward, batch norm forward / backward, the rest).

--conv-kernel instead times a single conv2d (3x3, pad 1, no bias) forward and
backward (grad w.r.t. input and weight) for the ResNet-20 shapes at --batch.

The script installs nothing. Exit status 3: torch not importable;
4: torchvision not importable (needed only for densenet121).
"""
import argparse
import json
import platform
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    print(f"torch not importable: {e}", file=sys.stderr)
    sys.exit(3)


# ---------------------------------------------------------------- models
class LambdaShortcut(nn.Module):
    """Option A: stride-2 subsampling + zero-padding of the channel dim."""

    def __init__(self, planes_out, planes_in):
        super().__init__()
        self.pad = (planes_out - planes_in) // 2

    def forward(self, x):
        x = x[:, :, ::2, ::2]
        return F.pad(x, (0, 0, 0, 0, self.pad, self.pad))


class BasicBlock(nn.Module):
    def __init__(self, in_planes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        if stride != 1 or in_planes != planes:
            self.shortcut = LambdaShortcut(planes, in_planes)
        else:
            self.shortcut = nn.Identity()

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet20(nn.Module):
    def __init__(self, in_channels=1, num_outputs=1, blocks=(3, 3, 3)):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        layers, in_planes = [], 16
        for planes, stride, n in zip((16, 32, 64), (1, 2, 2), blocks):
            for s in [stride] + [1] * (n - 1):
                layers.append(BasicBlock(in_planes, planes, s))
                in_planes = planes
        self.layers = nn.Sequential(*layers)
        self.linear = nn.Linear(64, num_outputs)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layers(out)
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.linear(out)


def build_model(name, channels):
    if name == "resnet20":
        return ResNet20(in_channels=channels)
    try:
        import torchvision
    except Exception as e:  # noqa: BLE001
        print(f"torchvision not importable: {e}", file=sys.stderr)
        sys.exit(4)
    m = torchvision.models.densenet121(num_classes=1)
    if channels != 3:
        m.features.conv0 = nn.Conv2d(channels, 64, 7, 2, 3, bias=False)
    return m


# ---------------------------------------------------------------- stats
def summarize(samples_s):
    ms = [s * 1e3 for s in samples_s]
    med = statistics.median(ms)
    if len(ms) >= 2:
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
        iqr = q3 - q1
    else:
        iqr = 0.0
    return {"median_ms": med, "iqr_ms": iqr, "n": len(ms), "samples_ms": ms}


def print_table(rows, title):
    print(f"\n{title}\n")
    print("| phase | median ms | IQR ms |")
    print("|---|---:|---:|")
    for name, r in rows.items():
        print(f"| {name} | {r['median_ms']:.3f} | {r['iqr_ms']:.3f} |")


# ---------------------------------------------------------------- benches
def setup_step(args):
    """The seeded model in train mode, one batch, its optimizer and the loss."""
    torch.manual_seed(0)
    model = build_model(args.model, args.channels)
    model.train()
    x = torch.randn(args.batch, args.channels, args.size, args.size)
    y = torch.randint(0, 2, (args.batch, 1)).float()
    model, x, y = model.to(args.device), x.to(args.device), y.to(args.device)
    if args.optim == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, x, y, opt, nn.BCEWithLogitsLoss()


def sync_of(device):
    """The call that waits for `device`'s queued work (nothing on the CPU)."""
    if device.startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


def bench_step(args):
    model, x, y, opt, crit = setup_step(args)
    sync = sync_of(args.device)
    cuda = args.device.startswith("cuda")

    def pc():
        sync()
        return time.perf_counter()

    def one_step():
        out = model(x)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t0 = pc()
    one_step()
    first = pc() - t0
    for _ in range(max(args.warmup - 1, 0)):
        one_step()

    ph = {"forward": [], "loss": [], "backward": [], "optimizer": []}
    for _ in range(args.repeats):
        t0 = pc()
        out = model(x)
        t1 = pc()
        loss = crit(out, y)
        t2 = pc()
        loss.backward()
        t3 = pc()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t4 = pc()
        ph["forward"].append(t1 - t0)
        ph["loss"].append(t2 - t1)
        ph["backward"].append(t3 - t2)
        ph["optimizer"].append(t4 - t3)

    steps = []
    for _ in range(args.repeats):
        t0 = pc()
        one_step()
        steps.append(pc() - t0)
    ph["step"] = steps
    rows = {k: summarize(v) for k, v in ph.items()}
    rows["first step"] = summarize([first])
    extra = {}
    if cuda:
        extra["peak_memory_mib"] = torch.cuda.max_memory_allocated() / 2**20
        extra["gpu"] = torch.cuda.get_device_name(torch.device(args.device))
        rows["peak memory MiB"] = {"median_ms": extra["peak_memory_mib"], "iqr_ms": 0.0}
    nparams = sum(p.numel() for p in model.parameters())
    title = (f"{args.model} in_ch={args.channels} size={args.size} batch={args.batch} "
             f"optim={args.optim} device={args.device} threads={torch.get_num_threads()} "
             f"params={nparams} warmup={args.warmup} repeats={args.repeats} "
             f"torch={torch.__version__}")
    return rows, title, {"params": nparams, **extra}


PROFILE_GROUPS = {  # layer type: the aten ops whose self CPU time it sums
    "convolution forward": ("aten::mkldnn_convolution", "aten::convolution", "aten::_convolution"),
    "convolution backward": ("aten::convolution_backward",),
    "batch norm forward": ("aten::native_batch_norm", "aten::batch_norm",
                           "aten::_batch_norm_impl_index"),
    "batch norm backward": ("aten::native_batch_norm_backward",),
}


def profile_step(args):
    """Per-layer-type time of one step from torch.profiler (self CPU time per aten op, summed
    by PROFILE_GROUPS, per step); "the rest" is the profiled step's wall time less those."""
    from torch.profiler import ProfilerActivity, profile
    model, x, y, opt, crit = setup_step(args)

    def one_step():
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        one_step()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(args.repeats):
            one_step()
    wall_ms = (time.perf_counter() - t0) * 1e3 / args.repeats
    self_us = {e.key: e.self_cpu_time_total for e in prof.key_averages()}
    rows = {}
    for group, ops in PROFILE_GROUPS.items():
        ms = sum(self_us.get(op, 0.0) for op in ops) / 1e3 / args.repeats
        rows[group] = {"median_ms": ms, "iqr_ms": 0.0}
    rows["the rest"] = {"median_ms": wall_ms - sum(r["median_ms"] for r in rows.values()),
                        "iqr_ms": 0.0}
    rows["step (profiled)"] = {"median_ms": wall_ms, "iqr_ms": 0.0}
    title = (f"{args.model} per layer type, torch.profiler over {args.repeats} steps "
             f"(means, profiler overhead in the step), threads={torch.get_num_threads()}")
    return rows, title, {}


CONV_SHAPES = [  # (name, c_in, c_out, hw_in, stride)
    ("16->16 3x3 @28x28", 16, 16, 28, 1),
    ("32->32 3x3 @14x14", 32, 32, 14, 1),
    ("64->64 3x3 @7x7", 64, 64, 7, 1),
]
CONV_SHAPES_EXTRA = [
    ("stem C->16 3x3 @28x28", None, 16, 28, 1),
    ("16->32 3x3 s2 28->14", 16, 32, 28, 2),
    ("32->64 3x3 s2 14->7", 32, 64, 14, 2),
]


def bench_conv(args):
    torch.manual_seed(0)
    pc = time.perf_counter
    shapes = CONV_SHAPES + (CONV_SHAPES_EXTRA if args.all_convs else [])
    rows = {}
    for name, cin, cout, hw, stride in shapes:
        cin = args.channels if cin is None else cin
        conv = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        x = torch.randn(args.batch, cin, hw, hw, requires_grad=True)
        gy = torch.randn(args.batch, cout, (hw + 2 - 3) // stride + 1, (hw + 2 - 3) // stride + 1)
        for _ in range(args.warmup):
            conv(x).backward(gy)
            conv.weight.grad = None
            x.grad = None
        fw, bw, both = [], [], []
        for _ in range(args.repeats):
            t0 = pc()
            y = conv(x)
            t1 = pc()
            y.backward(gy)
            t2 = pc()
            conv.weight.grad = None
            x.grad = None
            fw.append(t1 - t0)
            bw.append(t2 - t1)
            both.append(t2 - t0)
        rows[f"{name} fwd"] = summarize(fw)
        rows[f"{name} bwd (dx+dw)"] = summarize(bw)
        rows[f"{name} fwd+bwd"] = summarize(both)
    title = (f"conv2d kernels batch={args.batch} threads={torch.get_num_threads()} "
             f"warmup={args.warmup} repeats={args.repeats} torch={torch.__version__}")
    return rows, title, {}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["resnet20", "densenet121"], default="resnet20")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=None, help="28 for resnet20, 224 for densenet121")
    p.add_argument("--channels", type=int, default=None, help="1 for resnet20, 3 for densenet121")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--optim", choices=["sgd", "adam"], default="sgd",
                   help="sgd: lr 0.1; adam: lr 1e-3")
    p.add_argument("--conv-kernel", action="store_true",
                   help="time single conv2d fwd/bwd for the ResNet-20 shapes instead")
    p.add_argument("--all-convs", action="store_true",
                   help="with --conv-kernel: also the stem and the stride-2 convs")
    p.add_argument("--profile", action="store_true",
                   help="per-layer-type time of the step (torch.profiler) instead")
    p.add_argument("--json", metavar="PATH", help="write results as JSON")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (the step only)")
    args = p.parse_args()
    if args.device != "cpu" and (args.conv_kernel or args.profile):
        p.error("--device applies to the step only, not to --conv-kernel or --profile")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"--device {args.device}: this torch {torch.__version__} sees no CUDA device",
              file=sys.stderr)
        sys.exit(5)
    if args.size is None:
        args.size = 224 if args.model == "densenet121" else 28
    if args.channels is None:
        args.channels = 3 if args.model == "densenet121" else 1

    torch.set_num_threads(args.threads)
    if args.conv_kernel:
        rows, title, extra = bench_conv(args)
    elif args.profile:
        rows, title, extra = profile_step(args)
    else:
        rows, title, extra = bench_step(args)
    print_table(rows, title)

    if args.json:
        doc = {
            "config": vars(args),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "python": platform.python_version(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "mkldnn": torch.backends.mkldnn.is_available(),
            "title": title,
            "results": rows,
            **extra,
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
