#!/usr/bin/env python3
"""LibAUC 2.0.1 side by side with rankrisk: same images, same budget, same metrics.

Trains CIFAR ResNet-20 (option-A shortcuts, 1 input channel, 1 output logit; the class in
torch_step.py next to this file) on the exact split our Rust runs use, written by

    cargo run --release --example export_split -- --data fashion-mnist --positive 3 --json PATH

with five methods:

  ce      torch BCEWithLogitsLoss on the logit, torch.optim.Adam lr 1e-3 (our CE setting)
  aucm    libauc AUCMLoss + PESG                 (on sigmoid(logit), as LibAUC's examples do)
  sopa    libauc pAUC_CVaR_Loss (beta=--beta) + SOPA   (one-way pAUC, exact CVaR)
  sopa-s  libauc pAUC_DRO_Loss (KL-DRO) + SOPAs        (one-way pAUC, smoothed)
  sota-s  libauc tpAUC_KL_Loss + SOTAs                 (two-way pAUC, smoothed)
  staco   libauc tpAUC_CVaR_loss + STACO             (two-way pAUC, exact; LibAUC 2.0)

Batches: 16 positives + 16 negatives (positive share 0.5), per class a shuffled pool consumed
without replacement and reshuffled when exhausted -- what LibAUC's
DualSampler(sampling_rate=0.5) is meant to do. Default --sampler own implements that;
--sampler libauc uses libauc.sampler.DualSampler itself, whose 2.0.1 wrap-around repeats and
skips samples (see libauc_stream). One index stream is drawn once and every method trains on
the identical sequence of batches. (Our Rust DualSampler's last batch of each pass over the
negatives is short; here every batch is full.) Budget: exactly
epochs * ceil(n_train / batch) optimizer steps (our definition of a pass), whatever
DualSampler calls an epoch; after every pass the model is evaluated (eval mode) on val and
test. No learning-rate schedule (LibAUC's examples decay lr at epochs 30/45 or 50/75 of
60/100; with a few passes none would fire).

Metrics (numpy, same definitions as src/metrics/auc.rs):
  AUC   fraction of correctly ordered (pos, neg) pairs, ties 1/2.
  pAUC  FPR in [alpha, beta]: negatives sorted descending, the j-th (0-based) gets weight
        |[j, j+1] & [alpha N-, beta N-]|, credit #pos above + 0.5 #pos tied;
        pAUC = sum_j w_j credit_j / (N+ (beta - alpha) N-).

Outputs under --out/METHOD/: scores_{val,test}_epoch{k}.csv (label,score; label +1/-1;
score = the logit; rows in the split's order) and summary.json. A markdown table is printed
at the end.

Smoke test without the Rust example (builds a split from the first images, class 3 positive):

    nice -n 10 python benches/peers/libauc_side_by_side.py --make-split 600,200,200 \
        --max-steps 10 --out /tmp/lss

Installs nothing. Exit status 3: numpy, torch or libauc not importable; 2: bad input.
"""
import argparse
import gzip
import json
import math
import os
import platform
import statistics
import struct
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn as nn
except Exception as e:  # noqa: BLE001
    print(f"torch/numpy not importable: {e}")
    sys.exit(3)
try:
    import libauc
    from libauc.losses import AUCMLoss, pAUC_CVaR_Loss, pAUC_DRO_Loss, tpAUC_KL_Loss
    from libauc.optimizers import PESG, SOPA, SOPAs, SOTAs
    # Not in auc.py's __all__ in 2.0.1, so not importable from libauc.losses.
    from libauc.losses.auc import tpAUC_CVaR_loss
    from libauc.optimizers.staco import STACO
    from libauc.sampler import DualSampler
except Exception as e:  # noqa: BLE001
    print(f"libauc not importable: {e}")
    sys.exit(3)

sys.dont_write_bytecode = True  # no __pycache__ next to torch_step.py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_step import ResNet20  # noqa: E402

METHODS = ("ce", "aucm", "sopa", "sopa-s", "sota-s", "staco")
# Per-data-set normalization, as src/tasks/long_tailed.rs applies it; chosen by the split's
# "task" label (export_split writes e.g. "fashion-mnist-LT 0.01 (+3)" or "mnist-LT 0.01 (+3)").
NORMALIZATION = {"fashion-mnist": (0.2860, 0.3530), "mnist": (0.1307, 0.3081)}
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
SITE = "libauc/"  # paths below are relative to site-packages/

# ----------------------------------------------------------------------------------------
# LibAUC hyper-parameters. "defaults": the constructors' defaults in LibAUC 2.0.1, which are
# also the defaults of LibAUC's own trainer search spaces (libauc/trainer/config/spaces.py:1
# AUCMLossSpace, :166 pAUC_CVaR_LossSpace, :246 pAUC_DRO_LossSpace, :328 tpAUC_KL_LossSpace),
# except where the brief fixes a value (PESG weight_decay 1e-4 as in LibAUC's AUROC examples;
# pAUC_CVaR_Loss beta = --beta). "examples": the values of LibAUC's current example scripts
# examples/20_Distributed_Training_for_Optimizing_{AUROC,OPAUC_CVaR,OPAUC_DRO,TPAUC_KL}.py.
# Learning rates are LibAUC's example values in both sets: PESG 0.1, SOPA/SOPAs/SOTAs 1e-3.
# ----------------------------------------------------------------------------------------
HPARAMS = {
    "defaults": {
        "aucm": {
            # libauc/losses/auc.py:83-87  AUCMLoss(margin=1.0, imratio=None, version='v1')
            "loss": {"margin": 1.0},
            # libauc/optimizers/pesg.py:61-75  PESG(lr=0.1, mode='sgd', clip_value=1.0,
            #   weight_decay=1e-5, epoch_decay=2e-3, momentum=0.9); weight_decay 1e-4 from
            #   examples/02_* and examples/20_*AUROC.py (brief).
            "opt": {"lr": 0.1, "mode": "sgd", "momentum": 0.9, "epoch_decay": 2e-3,
                    "weight_decay": 1e-4, "clip_value": 1.0},
        },
        "sopa": {
            # libauc/losses/auc.py:438-446  pAUC_CVaR_Loss(margin=1.0, beta=0.2, eta=0.1,
            #   surr_loss='squared_hinge'); beta overridden by --beta
            "loss": {"margin": 1.0, "eta": 0.1},
            # libauc/optimizers/sopa.py:54-70  SOPA(mode='adam', eta=1.0 (unused), lr=1e-3,
            #   clip_value=1.0, weight_decay=0, epoch_decay=0)
            "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 0.0, "clip_value": 1.0},
        },
        "sopa-s": {
            # libauc/losses/auc.py:547-553  pAUC_DRO_Loss(gamma=0.9, margin=1.0, Lambda=1.0)
            "loss": {"gamma": 0.9, "margin": 1.0, "Lambda": 1.0},
            # libauc/optimizers/sopa_s.py:54-69  SOPAs(lr=1e-3, mode='adam', clip_value=2.0,
            #   weight_decay=1e-5, epoch_decay=0)
            "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 1e-5, "clip_value": 2.0},
        },
        "sota-s": {
            # libauc/losses/auc.py:643-650  tpAUC_KL_Loss(tau=1.0, Lambda=1.0,
            #   gammas=(0.9, 0.9), margin=1.0)
            "loss": {"tau": 1.0, "Lambda": 1.0, "gammas": (0.9, 0.9), "margin": 1.0},
            # libauc/optimizers/sota_s.py:54-69  SOTAs(mode='adam', lr=1e-3, clip_value=1.0,
            #   weight_decay=0, epoch_decay=0)
            "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 0.0, "clip_value": 1.0},
        },
        "staco": {
            # libauc/losses/auc.py:790-799  tpAUC_CVaR_loss(threshold=0.5, alpha=0.1,
            #   beta_0=0.1, beta_1=0.1, theta_0=0.5, theta_1=0.5); the region (theta_0 =
            #   1 - --tpr-min, theta_1 = --fpr-max) is set from the run's flags
            "loss": {"threshold": 0.5, "alpha": 0.1, "beta_0": 0.1, "beta_1": 0.1},
            # libauc/optimizers/staco.py:45-60  STACO(mode='adam', lr=1e-3, clip_value=1.0,
            #   weight_decay=0, epoch_decay=0)
            "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 0.0, "clip_value": 1.0},
        },
    },
    "examples": {
        # examples/20_Distributed_Training_for_Optimizing_AUROC.py: lr 0.1, margin 1.0,
        #   epoch_decay 0.003, weight_decay 1e-4, momentum 0.9
        "aucm": {"loss": {"margin": 1.0},
                 "opt": {"lr": 0.1, "mode": "sgd", "momentum": 0.9, "epoch_decay": 3e-3,
                         "weight_decay": 1e-4, "clip_value": 1.0}},
        # ..._OPAUC_CVaR.py: lr 1e-3, eta 0.1, (beta 0.3 there; --beta here), wd 2e-4, adam
        "sopa": {"loss": {"margin": 1.0, "eta": 0.1},
                 "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 2e-4, "clip_value": 1.0}},
        # ..._OPAUC_DRO.py: lr 1e-3, margin 0.6, gamma 0.1, (Lambda default 1.0), wd 2e-4, adam
        "sopa-s": {"loss": {"gamma": 0.1, "margin": 0.6, "Lambda": 1.0},
                   "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 2e-4,
                           "clip_value": 2.0}},
        # ..._TPAUC_KL.py: lr 1e-3, gammas (0.5, 0.5), tau 1.0, Lambda 0.5, wd 2e-4, adam
        "sota-s": {"loss": {"tau": 1.0, "Lambda": 0.5, "gammas": (0.5, 0.5), "margin": 1.0},
                   "opt": {"mode": "adam", "lr": 1e-3, "weight_decay": 2e-4,
                           "clip_value": 1.0}},
    },
}
# LibAUC 2.0.1 has no distributed example script for STACO: its "examples" values are the
# defaults (the tutorial notebook 18 uses lr 1e-3, alpha = beta_0 = beta_1 = 1e-3 over 60 epochs).
HPARAMS["examples"]["staco"] = HPARAMS["defaults"]["staco"]
CE_HPARAMS = {"loss": "BCEWithLogitsLoss", "opt": {"name": "torch.optim.Adam", "lr": 1e-3}}


# ---------------------------------------------------------------------------- data
def normalization(task):
    """(mean, std) of the data set a split's task label names (Fashion-MNIST for smoke splits)."""
    name = (task or "fashion-mnist").split("-LT")[0].split("-first-")[0]
    if name not in NORMALIZATION:
        raise ValueError(f"task {task!r}: no normalization for {name!r} "
                         f"(known: {', '.join(NORMALIZATION)})")
    return NORMALIZATION[name]


def read_idx(path):
    """An IDX file, gzipped (PATH) or plain (PATH without .gz: how the MNIST folder holds it)."""
    if not os.path.exists(path) and path.endswith(".gz") and os.path.exists(path[:-3]):
        with open(path[:-3], "rb") as f:
            data = f.read()
    else:
        with gzip.open(path, "rb") as f:
            data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    if magic == 2051:
        rows, cols = struct.unpack(">II", data[8:16])
        return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows, cols)
    if magic == 2049:
        return np.frombuffer(data, dtype=np.uint8, offset=8)
    raise ValueError(f"{path}: unknown IDX magic {magic}")


class IndexedImages(torch.utils.data.Dataset):
    """Normalized images of one part of the split; items are (x, y, index) as LibAUC's
    index-based losses need (index = position in this training set, 0..n-1)."""

    def __init__(self, images_u8, positive, mean, std):
        x = torch.from_numpy(images_u8.astype(np.float32) / 255.0)
        self.x = ((x - mean) / std).unsqueeze(1).contiguous()  # [N, 1, 28, 28]
        self.targets = np.asarray(positive, dtype=np.int64)   # 1 positive, 0 negative
        self.y = torch.from_numpy(self.targets.astype(np.float32)).unsqueeze(1)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return self.x[i], self.y[i], i

    def batch(self, idx):
        """Same as stacking __getitem__ over idx (LongTensor), without a DataLoader."""
        return self.x.index_select(0, idx), self.y.index_select(0, idx), idx


def load_split(path):
    with open(path) as f:
        s = json.load(f)
    for part in ("train", "val", "test"):
        p = s[part]
        if len(p["index"]) != len(p["positive"]):
            raise ValueError(f"{path}: {part}: index and positive differ in length")
        if p["file"] not in FILES:
            raise ValueError(f"{path}: {part}: unknown file {p['file']!r}")
    if list(s.get("shape", [1, 28, 28])) != [1, 28, 28]:
        raise ValueError(f"{path}: shape {s['shape']} is not [1, 28, 28]")
    return s


def make_split(data_dir, sizes, positive_class=3):
    """Smoke-test split: train = first n_train images of the train file, val = the next n_val,
    test = the first n_test of the test file; class `positive_class` is positive."""
    n_tr, n_va, n_te = sizes
    ltr = read_idx(os.path.join(data_dir, FILES["train"][1]))
    lte = read_idx(os.path.join(data_dir, FILES["test"][1]))

    def part(file, labels, lo, hi):
        return {"file": file, "index": list(range(lo, hi)),
                "positive": [bool(labels[i] == positive_class) for i in range(lo, hi)]}

    return {"task": f"fashion-mnist-first-{n_tr}-{n_va}-{n_te}-pos{positive_class}",
            "seed": 0, "shape": [1, 28, 28],
            "train": part("train", ltr, 0, n_tr),
            "val": part("train", ltr, n_tr, n_tr + n_va),
            "test": part("test", lte, 0, n_te)}


def build_sets(split, data_dir):
    mean, std = normalization(split.get("task"))
    images = {}
    for part in ("train", "val", "test"):
        f = split[part]["file"]
        if f not in images:
            images[f] = read_idx(os.path.join(data_dir, FILES[f][0]))
    sets = {}
    for part in ("train", "val", "test"):
        p = split[part]
        img = images[p["file"]]
        idx = np.asarray(p["index"], dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= len(img)):
            raise ValueError(f"{part}: index out of range for {p['file']} ({len(img)} images)")
        sets[part] = IndexedImages(img[idx], p["positive"], mean, std)
    return sets


def own_stream(targets, batch, steps, seed):
    """What DualSampler(sampling_rate=0.5) is meant to do, without its wrap-around bug (see
    libauc_stream): per class a seeded random permutation consumed in order, without
    replacement; when a class runs out, the rest of its permutation is used and a fresh
    permutation continues the batch. Each row: batch/2 positives then batch/2 negatives."""
    rng = np.random.default_rng(seed)
    pools = []
    for ids in (np.flatnonzero(targets == 1), np.flatnonzero(targets == 0)):
        pools.append({"ids": ids, "perm": rng.permutation(ids), "ptr": 0})

    def take(pool, k):
        out = []
        while k > 0:
            if pool["ptr"] == len(pool["perm"]):
                pool["perm"], pool["ptr"] = rng.permutation(pool["ids"]), 0
            n = min(k, len(pool["perm"]) - pool["ptr"])
            out.append(pool["perm"][pool["ptr"]:pool["ptr"] + n])
            pool["ptr"] += n
            k -= n
        return out

    half = batch // 2
    rows = [np.concatenate(take(pools[0], half) + take(pools[1], batch - half))
            for _ in range(steps)]
    stream = np.stack(rows).astype(np.int64) if rows else np.zeros((0, batch), np.int64)
    return stream, {"sampler": "own (per-class permutations, replacement-free)",
                    "pos_len": int(len(pools[0]["ids"])), "neg_len": int(len(pools[1]["ids"])),
                    "num_pos": half, "num_neg": batch - half}


def libauc_stream(train_set, batch, steps, seed):
    """LibAUC's own libauc.sampler.DualSampler(sampling_rate=0.5), used as is. DualSampler keeps
    its per-class pointers across __iter__ calls, so re-iterating continues the stream; one
    LibAUC 'epoch' covers the larger class (max(pos//16, neg//16) batches), ours is
    ceil(n/batch) steps, so the stream is simply cut into `steps` batches.
    Known defect (libauc/sampler/sampler.py:228-241 in 2.0.1): at a class's wrap-around
    `temp = self.pos_indices[self.pos_ptr:]` is a numpy view and the in-place
    np.random.shuffle that follows overwrites it, so the unseen tail of the old permutation
    is replaced by the tail of the new one: some samples are drawn twice per cycle, others
    skipped."""
    st = np.random.get_state()  # DualSampler reseeds numpy's global RNG; restore it after
    sampler = DualSampler(train_set, batch, labels=train_set.targets, sampling_rate=0.5,
                          random_seed=seed)
    need = steps * batch
    chunks, have = [], 0
    while have < need:
        chunk = np.fromiter(iter(sampler), dtype=np.int64)
        chunks.append(chunk)
        have += len(chunk)
    np.random.set_state(st)
    stream = np.concatenate(chunks)[:need].reshape(steps, batch)
    return stream, {"sampler": "libauc.sampler.DualSampler(sampling_rate=0.5)",
                    "pos_len": int(sampler.pos_len), "neg_len": int(sampler.neg_len),
                    "num_pos": int(sampler.num_pos), "num_neg": int(sampler.num_neg),
                    "dualsampler_batches_per_epoch": int(sampler.num_batches)}


def batch_stream(train_set, batch, steps, seed, kind):
    if kind == "libauc":
        stream, info = libauc_stream(train_set, batch, steps, seed)
    else:
        stream, info = own_stream(train_set.targets, batch, steps, seed)
    pos = train_set.targets[stream].sum(axis=1)
    assert (pos == batch // 2).all(), "batch is not 16 + 16"
    return torch.from_numpy(stream), info


# ---------------------------------------------------------------------------- metrics
def _credits_desc(scores, labels):
    s = np.asarray(scores, dtype=np.float64)
    lab = np.asarray(labels).astype(bool)
    pos = np.sort(s[lab])
    neg = np.sort(s[~lab])[::-1]
    if pos.size == 0 or neg.size == 0:
        raise ValueError("both classes are needed")
    if not (np.isfinite(pos).all() and np.isfinite(neg).all()):
        raise ValueError("non-finite score")
    above = pos.size - np.searchsorted(pos, neg, side="right")
    tied = np.searchsorted(pos, neg, side="right") - np.searchsorted(pos, neg, side="left")
    return above + 0.5 * tied, pos.size, neg.size


def auc(scores, labels):
    c, npos, nneg = _credits_desc(scores, labels)
    return float(c.sum() / (npos * nneg))


def pauc(scores, labels, alpha, beta):
    if not (0.0 <= alpha < beta <= 1.0):
        raise ValueError(f"bad FPR range [{alpha}, {beta}]")
    c, npos, nneg = _credits_desc(scores, labels)
    lo, hi = alpha * nneg, beta * nneg
    j = np.arange(nneg, dtype=np.float64)
    w = np.clip(np.minimum(hi, j + 1) - np.maximum(lo, j), 0.0, None)
    return float((w * c).sum() / (npos * (hi - lo)))


def self_test():
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(2, 40))
        s = rng.integers(0, 6, n).astype(float)  # many ties
        y = rng.integers(0, 2, n)
        if y.min() == y.max():
            continue
        P, N = s[y == 1], s[y == 0]
        ref_auc = sum((p > q) + 0.5 * (p == q) for p in P for q in N) / (len(P) * len(N))
        assert abs(auc(s, y) - ref_auc) < 1e-12
        a, b = sorted(rng.uniform(0, 1, 2))
        if b - a < 1e-3:
            continue
        Nd = np.sort(N)[::-1]
        tot = 0.0
        for jj, q in enumerate(Nd):
            wgt = max(0.0, min(b * len(N), jj + 1) - max(a * len(N), jj))
            tot += wgt * sum((p > q) + 0.5 * (p == q) for p in P)
        ref = tot / (len(P) * (b - a) * len(N))
        assert abs(pauc(s, y, a, b) - ref) < 1e-9, (trial, pauc(s, y, a, b), ref)
    assert abs(pauc([3, 2, 1, 0], [1, 1, 0, 0], 0.0, 1.0) - 1.0) < 1e-12
    print("metrics self-test passed")


# ---------------------------------------------------------------------------- methods
def build(method, n_train, n_pos, hp, beta, device, region=(0.7, 0.3), lr=None):
    """(model, loss_fn, optimizer, uses_index, sigmoid_before_loss, hparams record); `lr`, when
    given, replaces the hyper-parameter set's learning rate (the record shows the one used)."""
    model = ResNet20(in_channels=1, num_outputs=1).to(device)
    if method == "ce":
        loss_fn = nn.BCEWithLogitsLoss()
        rec = {"loss": CE_HPARAMS["loss"],
               "opt": dict(CE_HPARAMS["opt"], lr=lr or CE_HPARAMS["opt"]["lr"])}
        opt = torch.optim.Adam(model.parameters(), lr=rec["opt"]["lr"])
        return model, loss_fn, opt, False, False, rec
    h = HPARAMS[hp][method]
    lk, ok = dict(h["loss"]), dict(h["opt"])
    if lr is not None:
        ok["lr"] = lr
    if method == "aucm":
        loss_fn = AUCMLoss(device=device, **lk)
        opt = PESG(model.parameters(), loss_fn=loss_fn, device=device, verbose=False, **ok)
        rec = {"loss": "libauc.losses.AUCMLoss", "loss_kwargs": lk,
               "opt": "libauc.optimizers.PESG", "opt_kwargs": ok}
        return model, loss_fn, opt, False, True, rec
    if method == "sopa":
        lk["beta"] = beta
        loss_fn = pAUC_CVaR_Loss(data_len=n_train, pos_len=n_pos, device=device, **lk)
        opt = SOPA(model.parameters(), loss_fn=loss_fn, device=device, **ok)
        rec = {"loss": "libauc.losses.pAUC_CVaR_Loss", "loss_kwargs": lk,
               "opt": "libauc.optimizers.SOPA", "opt_kwargs": ok}
        return model, loss_fn, opt, True, True, rec
    if method == "sopa-s":
        loss_fn = pAUC_DRO_Loss(data_len=n_train, device=device, **lk)
        opt = SOPAs(model.parameters(), device=device, verbose=False, **ok)
        rec = {"loss": "libauc.losses.pAUC_DRO_Loss", "loss_kwargs": lk,
               "opt": "libauc.optimizers.SOPAs", "opt_kwargs": ok}
        return model, loss_fn, opt, True, True, rec
    if method == "sota-s":
        loss_fn = tpAUC_KL_Loss(data_len=n_train, device=device, **lk)
        opt = SOTAs(model.parameters(), loss_fn=loss_fn, device=device, **ok)
        rec = {"loss": "libauc.losses.tpAUC_KL_Loss", "loss_kwargs": lk,
               "opt": "libauc.optimizers.SOTAs", "opt_kwargs": ok}
        return model, loss_fn, opt, True, True, rec
    if method == "staco":
        # Sigmoid scores into the loss, as our STACO (and LibAUC's SOPA family here) takes
        # them; LibAUC's STACO tutorial feeds logits. Ids are global (data_length = n_train),
        # as LibAUC's Trainer passes them.
        tpr_min, fpr_max = region
        lk["theta_0"], lk["theta_1"] = 1.0 - tpr_min, fpr_max
        loss_fn = tpAUC_CVaR_loss(data_length=n_train, device=device, **lk)
        opt = STACO(model.parameters(), **ok)
        rec = {"loss": "libauc.losses.auc.tpAUC_CVaR_loss", "loss_kwargs": lk,
               "opt": "libauc.optimizers.staco.STACO", "opt_kwargs": ok}
        return model, loss_fn, opt, True, True, rec
    raise ValueError(method)


def q_stats(samples_s):
    ms = [s * 1e3 for s in samples_s]
    if not ms:
        return {"median_ms": None, "iqr_ms": None, "n": 0}
    iqr = 0.0
    if len(ms) >= 2:
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
        iqr = q3 - q1
    return {"median_ms": statistics.median(ms), "iqr_ms": iqr, "n": len(ms)}


@torch.no_grad()
def predict(model, ds, device, eval_batch):
    model.eval()
    out = []
    for lo in range(0, len(ds), eval_batch):
        out.append(model(ds.x[lo:lo + eval_batch].to(device)).reshape(-1).cpu())
    model.train()
    return torch.cat(out).numpy().astype(np.float64) if out else np.zeros(0)


def write_scores(path, labels, scores):
    with open(path, "w") as f:
        f.write("label,score\n")
        for lab, s in zip(labels, scores):
            f.write(f"{1 if lab else -1},{float(s)!r}\n")


def metrics_or_none(scores, labels, alpha, beta):
    try:
        return auc(scores, labels), pauc(scores, labels, alpha, beta)
    except ValueError:
        return None, None


def run_method(method, args, sets, stream, spp, device, versions, sampler_info):
    t_wall0 = time.perf_counter()
    out_dir = os.path.join(args.out, method)
    os.makedirs(out_dir, exist_ok=True)
    train = sets["train"]
    n_train, n_pos = len(train), int(train.targets.sum())
    torch.manual_seed(args.seed)  # same init for every method
    model, loss_fn, opt, uses_index, sigmoid, rec = build(
        method, n_train, n_pos, args.hparams, args.beta, device, (args.tpr_min, args.fpr_max),
        args.lr)
    model.train()
    steps = stream.shape[0]
    sync = (lambda: torch.cuda.synchronize()) if device.type == "cuda" else (lambda: None)
    pc = time.perf_counter

    step_s, data_s, losses = [], [], []
    epochs, train_s, eval_s = [], 0.0, 0.0
    diverged_at = None
    epoch_losses = []
    for t in range(steps):
        t0 = pc()
        x, y, idx = train.batch(stream[t])
        x, y, idx = x.to(device), y.to(device), idx.to(device)
        sync()
        t1 = pc()
        opt.zero_grad(set_to_none=True)
        logit = model(x)
        pred = torch.sigmoid(logit) if sigmoid else logit
        loss = loss_fn(pred, y, idx) if uses_index else loss_fn(pred, y)
        loss.backward()
        opt.step()
        sync()
        t2 = pc()
        data_s.append(t1 - t0)
        step_s.append(t2 - t1)
        train_s += t2 - t0
        lv = float(loss.detach())
        epoch_losses.append(lv)
        if not math.isfinite(lv) and diverged_at is None:
            diverged_at = t + 1
        last = t + 1 == steps
        if (t + 1) % spp == 0 or last or diverged_at is not None:
            k = (t + 1 + spp - 1) // spp
            te0 = pc()
            rec_e = {"epoch": k, "steps": t + 1, "partial": (t + 1) % spp != 0,
                     "mean_train_loss": float(np.mean(epoch_losses))}
            for part in ("val", "test"):
                s = predict(model, sets[part], device, args.eval_batch)
                write_scores(os.path.join(out_dir, f"scores_{part}_epoch{k}.csv"),
                             sets[part].targets, s)
                a, p = metrics_or_none(s, sets[part].targets, args.alpha, args.beta)
                rec_e[f"{part}_auc"], rec_e[f"{part}_pauc"] = a, p
            eval_s += pc() - te0
            rec_e["train_seconds_so_far"] = train_s
            epochs.append(rec_e)
            epoch_losses = []
            # LibAUC's step decay (its tutorials' `if epoch in decay_epochs:
            # optimizer.update_lr(decay_factor=10)`), after a whole pass only.
            if not rec_e["partial"] and k in args.decay_epochs:
                if hasattr(opt, "update_lr"):
                    opt.update_lr(decay_factor=args.decay_factor)
                else:
                    for group in opt.param_groups:
                        group["lr"] /= args.decay_factor
            print(f"  [{method}] epoch {k} step {t + 1}/{steps}: loss {rec_e['mean_train_loss']:.4f} "
                  f"val AUC {fmt(rec_e['val_auc'])} pAUC {fmt(rec_e['val_pauc'])} | "
                  f"test AUC {fmt(rec_e['test_auc'])} pAUC {fmt(rec_e['test_pauc'])}",
                  flush=True)
            if diverged_at is not None:
                print(f"  [{method}] non-finite loss at step {diverged_at}; stopping",
                      flush=True)
                break

    scored = [e for e in epochs if e["val_pauc"] is not None]
    best = max(scored, key=lambda e: (e["val_pauc"], -e["epoch"])) if scored else None
    summary = {
        "method": method,
        "task": args.task_label,
        "versions": versions,
        "threads": torch.get_num_threads(),
        "device": str(device),
        "hparams_set": args.hparams if method != "ce" else "ce",
        "hparams": rec,
        "sigmoid_before_loss": sigmoid,
        "batch": args.batch,
        "decay_epochs": sorted(args.decay_epochs),
        "decay_factor": args.decay_factor,
        "seed": args.seed,
        "alpha": args.alpha,
        "beta": args.beta,
        "n_train": n_train, "n_train_pos": n_pos,
        "n_val": len(sets["val"]), "n_test": len(sets["test"]),
        "sampler": sampler_info,
        "steps_per_pass": spp,
        "steps_budget": steps,
        "steps": len(step_s),
        "diverged_at_step": diverged_at,
        "epochs": epochs,
        "best_epoch": best["epoch"] if best else None,
        "best_val_pauc": best["val_pauc"] if best else None,
        "best_test_auc": best["test_auc"] if best else None,
        "best_test_pauc": best["test_pauc"] if best else None,
        "step_ms": q_stats(step_s),            # forward + loss + backward + optimizer
        "data_ms": q_stats(data_s),            # batch assembly (index_select) per step
        "train_seconds": train_s,              # sum of data + step times
        "step_seconds": float(sum(step_s)),
        "eval_seconds": eval_s,                # val + test prediction, metrics, CSVs
        "wall_seconds": time.perf_counter() - t_wall0,
    }
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return summary


def fmt(v, nd=4):
    return "n/a" if v is None else f"{v:.{nd}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", help="split JSON from `cargo run --example export_split`")
    ap.add_argument("--make-split", metavar="NTR,NVA,NTE",
                    help="smoke test: build a split from the first images (class 3 positive)"
                         " instead of reading --split (written to --split if given, else"
                         " OUT/split.json)")
    ap.add_argument("--data-dir", default="/work/main/datasets/test-data/fashion-mnist")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--epochs", type=int, default=2, help="passes of ceil(n_train/batch) steps")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--decay-epochs", default="",
                    help="comma list: after each of these passes the rate is divided by "
                         "--decay-factor (LibAUC's update_lr; torch's Adam by its param groups)")
    ap.add_argument("--decay-factor", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="out/peers/libauc")
    ap.add_argument("--max-steps", type=int, default=None, help="cap on steps (smoke tests)")
    ap.add_argument("--lr", type=float, default=None,
                    help="learning rate for every method run (default: each set's own)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.5)
    ap.add_argument("--tpr-min", type=float, default=0.7,
                    help="STACO's region: TPR >= this (theta_0 = 1 - it)")
    ap.add_argument("--fpr-max", type=float, default=0.3,
                    help="STACO's region: FPR <= this (theta_1)")
    ap.add_argument("--hparams", choices=("defaults", "examples"), default="defaults",
                    help="LibAUC constructor defaults (default) or its example scripts' values")
    ap.add_argument("--sampler", choices=("own", "libauc"), default="own",
                    help="own: replacement-free per-class permutations (what DualSampler is"
                         " meant to do); libauc: libauc.sampler.DualSampler as is (has a"
                         " wrap-around bug that repeats/skips samples)")
    ap.add_argument("--eval-batch", type=int, default=1000)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--self-test", action="store_true", help="check the metrics and exit")
    args = ap.parse_args()

    if args.self_test:
        self_test()
        return 0
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        print(f"unknown methods {bad}; choose from {','.join(METHODS)}", file=sys.stderr)
        return 2
    if args.batch % 2:
        print("--batch must be even (half positives, half negatives)", file=sys.stderr)
        return 2
    if not (0.0 <= args.alpha < args.beta <= 1.0):
        print("need 0 <= alpha < beta <= 1", file=sys.stderr)
        return 2
    try:
        args.decay_epochs = {int(e) for e in args.decay_epochs.split(",") if e.strip()}
    except ValueError:
        print(f"--decay-epochs {args.decay_epochs!r}: a comma list of pass numbers",
              file=sys.stderr)
        return 2
    late = sorted(e for e in args.decay_epochs if not 1 <= e < args.epochs)
    if late:
        print(f"--decay-epochs {late}: each must be a pass before the last (1..{args.epochs - 1})",
              file=sys.stderr)
        return 2
    if not args.decay_factor > 0:
        print(f"--decay-factor {args.decay_factor}: must be positive", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    os.makedirs(args.out, exist_ok=True)
    try:
        if args.make_split:
            sizes = [int(v) for v in args.make_split.split(",")]
            split = make_split(args.data_dir, sizes)
            path = args.split or os.path.join(args.out, "split.json")
            with open(path, "w") as f:
                json.dump(split, f)
        elif args.split:
            split = load_split(args.split)
        else:
            print("need --split PATH or --make-split NTR,NVA,NTE", file=sys.stderr)
            return 2
        sets = build_sets(split, args.data_dir)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args.task_label = split.get("task")
    for part in ("train", "val", "test"):
        t = sets[part].targets
        if t.min() == t.max():
            print(f"error: {part} has a single class", file=sys.stderr)
            return 2

    n_train = len(sets["train"])
    spp = math.ceil(n_train / args.batch)
    steps = args.epochs * spp
    if args.max_steps is not None:
        steps = min(steps, args.max_steps)
    stream, sampler_info = batch_stream(sets["train"], args.batch, steps, args.seed,
                                        args.sampler)
    versions = {"torch": torch.__version__, "libauc": getattr(libauc, "__version__", "?"),
                "numpy": np.__version__, "python": platform.python_version()}
    print(f"task {args.task_label}: train {n_train} ({int(sets['train'].targets.sum())} pos), "
          f"val {len(sets['val'])}, test {len(sets['test'])}; {spp} steps/pass, "
          f"{steps} steps; threads {torch.get_num_threads()}; torch {torch.__version__}, "
          f"libauc {versions['libauc']}; hparams {args.hparams}; sampler {args.sampler}", flush=True)

    results = []
    for m in methods:
        results.append(run_method(m, args, sets, stream, spp, device, versions, sampler_info))

    wall = time.perf_counter() - t0
    print(f"\nFPR range [{args.alpha}, {args.beta}]; {steps} steps of batch {args.batch} "
          f"(16+16); threads {torch.get_num_threads()}; wall {wall:.1f} s\n")
    print("| method | best epoch | val pAUC | test AUC | test pAUC | median ms/step | train s | eval s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in results:
        note = f" (diverged @ {s['diverged_at_step']})" if s["diverged_at_step"] else ""
        print(f"| {s['method']}{note} | {s['best_epoch'] if s['best_epoch'] else 'n/a'} | "
              f"{fmt(s['best_val_pauc'])} | {fmt(s['best_test_auc'])} | "
              f"{fmt(s['best_test_pauc'])} | {fmt(s['step_ms']['median_ms'], 1)} | "
              f"{s['train_seconds']:.1f} | {s['eval_seconds']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
