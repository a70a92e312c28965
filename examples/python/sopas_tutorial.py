#!/usr/bin/env python3
"""LibAUC 2.0.1's SOPA-s tutorial (examples/11_Optimizing_pAUC_Loss_with_SOPAs_on_Imbalanced_data),
ported: the same loop, run with LibAUC or with rankrisk by the block of imports and constructors
marked below, everything else shared.

The tutorial's structure: a dataset that returns ``(x, y, index)``, ``DualSampler`` with half of
every batch positive, ``pAUC_DRO_Loss`` (one-way pAUC by KL-DRO over the negatives) on
``torch.sigmoid(model(x))``, Adam with weight decay 5e-4 and LibAUC's gradient clamp, the rate
divided by 10 at one third and two thirds of the run, the test pAUC (FPR <= 0.3) after every
epoch. What changes at a CPU budget: ResNet-20 (1 channel) on Fashion-MNIST-LT with shirts
positive (the split rankrisk's runs use, written by ``export_split``) instead of ResNet-18 on
CIFAR-10 at imratio 0.2, 6 epochs with the decays after epochs 2 and 4 instead of 60 with
decays at 20 and 40 (about 14 CPU-minutes a run on one thread), and a validation set that picks the epoch reported (the tutorial reports the
best test epoch; both are printed).

    cargo run --release --example export_split -- --data fashion-mnist --positive 6 \\
        --json out/tutorial/split.json
    python examples/python/sopas_tutorial.py --library libauc --split out/tutorial/split.json \\
        --seed 0 --out out/tutorial/libauc-0.json
    python examples/python/sopas_tutorial.py --library rankrisk --split out/tutorial/split.json \\
        --seed 0 --out out/tutorial/rankrisk-0.json
    python examples/python/sopas_tutorial.py --table out/tutorial/*.json

``--library ce`` runs cross-entropy on the logits in the same loop and recipe (torch's Adam with
the weight decay and decays, shuffled batches), the baseline the pAUC runs are read against;
``--save-model FILE`` keeps the last model, and ``--init FILE`` starts a run from it (LibAUC's
tutorials' "from a CE-trained model"), the same start for both libraries.

Needs torch and numpy, LibAUC 2.0.1 for ``--library libauc``, and rankrisk's wheel for both (the
metrics are rankrisk's for both runs, so that the figures are comparable). The model and its
initialization are the same for both libraries at the same seed; the samplers' draws are each
library's own.
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import sys
import time

import numpy as np
import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "benches", "peers"))
from torch_step import ResNet20  # noqa: E402  (CIFAR ResNet-20, option-A shortcuts)

from rankrisk import metrics  # noqa: E402

IMAGES = {"train": "train-images-idx3-ubyte.gz", "test": "t10k-images-idx3-ubyte.gz"}
MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's pixel mean and deviation


class ImageDataset(torch.utils.data.Dataset):
    """One part of the split, normalized; items are ``(x, y, index)`` as LibAUC's index-based
    losses need, ``index`` the sample's position in this set."""

    def __init__(self, images, positive):
        x = torch.from_numpy(images.astype(np.float32) / 255.0)
        self.x = ((x - MEAN) / STD).unsqueeze(1).contiguous()
        self.targets = np.asarray(positive, dtype=np.int64)
        self.y = torch.from_numpy(self.targets.astype(np.float32))

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return self.x[i], self.y[i], i


def read_images(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n, rows, cols = struct.unpack(">IIII", data[:16])
    if magic != 2051:
        raise ValueError(f"{path}: not an IDX image file (magic {magic})")
    return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows, cols)


def load(split_path, data_dir):
    with open(split_path) as f:
        split = json.load(f)
    files = {}
    sets = {}
    for part in ("train", "val", "test"):
        p = split[part]
        if p["file"] not in IMAGES:
            raise ValueError(f"{split_path}: {part}: unknown file {p['file']!r}")
        if p["file"] not in files:
            files[p["file"]] = read_images(os.path.join(data_dir, IMAGES[p["file"]]))
        sets[part] = ImageDataset(files[p["file"]][np.asarray(p["index"])], p["positive"])
    return split["task"], sets


def scores_of(model, data):
    model.eval()
    with torch.no_grad():
        out = torch.cat([model(data.x[i:i + 1000]) for i in range(0, len(data), 1000)])
    model.train()
    return out.reshape(-1).numpy().astype(np.float64)


def load_start(path, task):
    """The model state saved by ``--save-model``, refused when it was trained on another task."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several kinds for a file that is not its own
        raise SystemExit(f"--init {path}: cannot be read as a model saved by --save-model "
                         f"({type(e).__name__})") from None
    if not isinstance(saved, dict) or "model" not in saved or "task" not in saved:
        raise SystemExit(f"--init {path}: not a file written by --save-model")
    if saved["task"] != task:
        raise SystemExit(f"--init {path}: trained on task {saved['task']!r}, this split is "
                         f"{task!r}")
    return saved


def train(args):
    torch.set_num_threads(args.threads)
    task, sets = load(args.split, args.data_dir)
    train_set = sets["train"]
    torch.manual_seed(args.seed)
    model = ResNet20()
    initial = None
    if args.init:
        initial = load_start(args.init, task)
        model.load_state_dict(initial["model"])
    decays = (args.epochs // 3, 2 * args.epochs // 3)

    # ---- the only lines that differ between the two libraries ---------------------------
    if args.library == "ce":
        # Cross-entropy on the logits, torch's Adam, shuffled batches: the baseline.
        bce = torch.nn.BCEWithLogitsLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr,
                                     weight_decay=args.weight_decay)
        sampler = torch.utils.data.RandomSampler(
            train_set, generator=torch.Generator().manual_seed(args.seed))

        def batch_loss(data, targets, index):
            return bce(model(data).reshape(-1), targets)

        def clamp(params):
            pass

        def decay_lr():
            for group in optimizer.param_groups:
                group["lr"] /= 10
    elif args.library == "libauc":
        from libauc.losses import pAUC_DRO_Loss
        from libauc.optimizers import SOPAs
        from libauc.sampler import DualSampler

        loss_fn = pAUC_DRO_Loss(data_len=len(train_set), gamma=0.9, margin=1.0, Lambda=1.0)
        optimizer = SOPAs(model.parameters(), loss_fn=loss_fn, mode="adam", lr=args.lr,
                          weight_decay=args.weight_decay)
        sampler = DualSampler(train_set, batch_size=args.batch, sampling_rate=0.5,
                              random_seed=args.seed)

        def clamp(params):
            pass  # SOPAs clamps each gradient element to +-2 itself

        def decay_lr():
            optimizer.update_lr(decay_factor=10)
    else:
        from rankrisk.torch import DualSampler
        from rankrisk.torch import SOPAs as pAUC_DRO_Loss

        loss_fn = pAUC_DRO_Loss(train_set.targets, inputs="probabilities", gamma=0.9, margin=1.0,
                                Lambda=1.0)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr,
                                     weight_decay=args.weight_decay)
        sampler = DualSampler(train_set.targets, batch_size=args.batch, sampling_rate=0.5,
                              seed=args.seed)

        def clamp(params):
            torch.nn.utils.clip_grad_value_(params, 2.0)  # what LibAUC's SOPAs does inside

        def decay_lr():
            for group in optimizer.param_groups:
                group["lr"] /= 10
    # ---------------------------------------------------------------------------------------
    if args.library != "ce":
        def batch_loss(data, targets, index):  # the tutorial's loss, on sigmoid outputs
            return loss_fn(torch.sigmoid(model(data)).reshape(-1), targets, index)

    loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch, sampler=sampler)
    val, test = sets["val"], sets["test"]
    rows = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for epoch in range(args.epochs):
        if epoch in decays:
            decay_lr()
        start, steps = time.perf_counter(), 0
        for data, targets, index in loader:
            loss = batch_loss(data, targets, index)
            optimizer.zero_grad()
            loss.backward()
            clamp(model.parameters())
            optimizer.step()
            steps += 1
            if args.max_steps and steps >= args.max_steps:
                break
        train_s = time.perf_counter() - start
        v, t = scores_of(model, val), scores_of(model, test)
        eval_s = time.perf_counter() - start - train_s
        row = {
            "epoch": epoch + 1,
            "steps": steps,
            "lr": optimizer.param_groups[0]["lr"],
            "train_s": round(train_s, 2),
            "eval_s": round(eval_s, 2),
            "val_pauc": metrics.pauc(val.targets, v, fpr=(0.0, 0.3)),
            "test_pauc": metrics.pauc(test.targets, t, fpr=(0.0, 0.3)),
            "test_auc": metrics.auc(test.targets, t),
            # The seed pAUC paper's range (docs/RESULTS.md's protocol tables).
            "val_pauc_range": metrics.pauc(val.targets, v, fpr=(0.05, 0.5)),
            "test_pauc_range": metrics.pauc(test.targets, t, fpr=(0.05, 0.5)),
        }
        rows.append(row)
        print(f"{args.library} seed {args.seed} epoch {row['epoch']:2d} lr {row['lr']:.0e} "
              f"steps {steps} train {train_s:.1f} s  val pAUC {row['val_pauc']:.4f}  "
              f"test pAUC {row['test_pauc']:.4f}  test AUC {row['test_auc']:.4f}", flush=True)
    result = {
        "library": args.library,
        "seed": args.seed,
        "task": task,
        "settings": {k: getattr(args, k) for k in ("epochs", "batch", "lr", "weight_decay",
                                                   "threads", "max_steps")},
        "decay_epochs": list(decays),
        "init": None if initial is None else {"file": args.init, "library": initial["library"],
                                              "seed": initial["seed"],
                                              "epochs": initial["epochs"]},
        "versions": versions(),
        "wall_s": round(time.perf_counter() - wall0, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "epochs": rows,
    }
    if args.save_model:
        os.makedirs(os.path.dirname(os.path.abspath(args.save_model)), exist_ok=True)
        tmp = args.save_model + ".tmp"
        torch.save({"model": model.state_dict(), "task": task, "library": args.library,
                    "seed": args.seed, "epochs": args.epochs}, tmp)
        os.replace(tmp, args.save_model)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


def versions():
    out = {"torch": torch.__version__}
    for name in ("libauc", "rankrisk"):
        try:
            out[name] = __import__(name).__version__
        except (ImportError, AttributeError):
            pass
    return out


def table(paths):
    """Per-epoch test pAUC of each library (mean (std) over seeds), then the epoch validation
    picks and the best test epoch (the tutorial's report), and the training time."""
    runs = {}
    for p in paths:
        with open(p) as f:
            r = json.load(f)
        label = r["library"] + (f" from {r['init']['library']}" if r.get("init") else "")
        runs.setdefault(label, []).append(r)
    libs = sorted(runs)

    def ms(values, nd=4):
        if len(values) == 1:
            return f"{values[0]:.{nd}f}"
        return f"{statistics.mean(values):.{nd}f} ({statistics.stdev(values):.{nd}f})"

    seeds = {lib: sorted(r["seed"] for r in runs[lib]) for lib in libs}
    print("| epoch | lr | " + " | ".join(f"{lib} test pAUC (FPR <= 0.3), seeds "
                                       f"{','.join(map(str, seeds[lib]))}" for lib in libs) + " |")
    print("|---|---|" + "---|" * len(libs))
    epochs = min(len(r["epochs"]) for lib in libs for r in runs[lib])
    for e in range(epochs):
        lr = runs[libs[0]][0]["epochs"][e]["lr"]
        cells = [ms([r["epochs"][e]["test_pauc"] for r in runs[lib]]) for lib in libs]
        print(f"| {e + 1} | {lr:.0e} | " + " | ".join(cells) + " |")
    print()
    print("| library | test pAUC at the validation's epoch | best test pAUC (the tutorial's) "
          "| test AUC at the validation's epoch | test pAUC[0.05, 0.5] at its validation's epoch "
          "| training s | process CPU s |")
    print("|---|---|---|---|---|---|---|")
    for lib in libs:
        picked, best, auc, ranged, train_s, cpu = [], [], [], [], [], []
        for r in runs[lib]:
            rows = r["epochs"]
            pick = max(rows, key=lambda x: x["val_pauc"])
            picked.append(pick["test_pauc"])
            auc.append(pick["test_auc"])
            best.append(max(x["test_pauc"] for x in rows))
            if all("val_pauc_range" in x for x in rows):
                ranged.append(max(rows, key=lambda x: x["val_pauc_range"])["test_pauc_range"])
            train_s.append(sum(x["train_s"] for x in rows))
            cpu.append(r["cpu_s"])
        print(f"| {lib} | {ms(picked)} | {ms(best)} | {ms(auc)} | "
              f"{ms(ranged) if len(ranged) == len(runs[lib]) else '-'} | {ms(train_s, 0)} | "
              f"{ms(cpu, 0)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", choices=("libauc", "rankrisk", "ce"),
                    help="whose SOPA-s, or ce: cross-entropy in the same loop and recipe")
    ap.add_argument("--split", help="export_split's JSON")
    ap.add_argument("--data-dir", default="datasets/test-data/fashion-mnist")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=0, help="per epoch; 0: the sampler's epoch")
    ap.add_argument("--out", help="where to write the run's JSON")
    ap.add_argument("--init", metavar="FILE", help="start from a model saved by --save-model")
    ap.add_argument("--save-model", metavar="FILE", help="keep the last model (for --init)")
    ap.add_argument("--table", nargs="+", metavar="JSON", help="print the side-by-side table")
    args = ap.parse_args()
    if args.table:
        table(args.table)
        return
    if not args.library or not args.split:
        ap.error("--library and --split are needed to train (or --table to print)")
    train(args)


if __name__ == "__main__":
    main()
