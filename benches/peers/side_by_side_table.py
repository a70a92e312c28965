#!/usr/bin/env python3
"""One markdown table of the side-by-side runs written by benches/peers/side_by_side.sh.

    python3 benches/peers/side_by_side_table.py --out out/peers --rankrisk target/release/rankrisk

Reads OUT/ours/METHOD/summary.json (our runs: the evaluation point with the best validation
pAUC, its test AUC with DeLong's 95% interval and its test pAUC with a stratified bootstrap
interval, as the run wrote them) and OUT/libauc/METHOD/summary.json (LibAUC's runs: the pass
with the best validation pAUC). LibAUC's intervals come from `rankrisk metrics` on that pass's
test scores (same DeLong, same bootstrap: 2,000 resamples, seed 0), so both sides' intervals
are computed by the same code. Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

OURS = [("ce", "CE (Adam 1e-3)"), ("aucm", "AUC-M (PESG 0.1)"), ("mb", "MB (SGD 0.1)"),
        ("sbcd", "AGD-SBCD (paper_deep)"), ("sopa", "SOPA"), ("sopa-s", "SOPA-s"),
        ("sota-s", "SOTA-s")]
LIBAUC = [("ce", "CE (BCE, Adam 1e-3)"), ("aucm", "AUC-M (AUCMLoss + PESG)"),
          ("sopa", "SOPA (pAUC_CVaR_Loss)"), ("sopa-s", "SOPA-s (pAUC_DRO_Loss)"),
          ("sota-s", "SOTA-s (tpAUC_KL_Loss)")]


def ci(est, bounds):
    return f"{est:.4f} [{bounds[0]:.4f}, {bounds[1]:.4f}]" if bounds else f"{est:.4f}"


def ours_row(path):
    with open(path) as f:
        s = json.load(f)
    best, hist = s["best"], s["history"]
    last = hist[-1]
    steps = [h["step_ms"] for h in hist if h.get("step_ms")]
    wall = last["seconds"] + last["eval_seconds"] + last["checkpoint_seconds"]
    return {
        "best": f"{best['epoch']} ({best['candidate']})" if best["candidate"] != "w"
        else str(best["epoch"]),
        "auc": ci(best["test_auc"], best.get("test_auc_ci")),
        "pauc": ci(best["test_pauc"], best.get("test_pauc_ci")),
        "ms": statistics.median(steps) if steps else float("nan"),
        "train": last["seconds"], "eval": last["eval_seconds"] + last["checkpoint_seconds"],
        "wall": wall,
    }


def libauc_row(dirname, rankrisk):
    with open(os.path.join(dirname, "summary.json")) as f:
        s = json.load(f)
    k = s["best_epoch"]
    if k is None:
        return None
    csv = os.path.join(dirname, f"scores_test_epoch{k}.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.json")
        subprocess.run([rankrisk, "metrics", csv, "--alpha", str(s["alpha"]), "--beta",
                        str(s["beta"]), "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            col = json.load(f)["columns"][0]
    a, p = col["auc"], col["pauc"]
    return {
        "best": str(k),
        "auc": ci(a["estimate"], [a["lower"], a["upper"]]),
        "pauc": ci(p["estimate"], [p["lower"], p["upper"]]),
        "ms": s["step_ms"]["median_ms"],
        "train": s["train_seconds"], "eval": s["eval_seconds"],
        "wall": s["train_seconds"] + s["eval_seconds"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="out/peers")
    ap.add_argument("--rankrisk", default="target/release/rankrisk")
    args = ap.parse_args()
    rows = []
    for key, name in OURS:
        path = os.path.join(args.out, "ours", key, "summary.json")
        if os.path.exists(path):
            rows.append(("rankrisk (Burn, flex)", name, ours_row(path)))
    for key, name in LIBAUC:
        d = os.path.join(args.out, "libauc", key)
        if os.path.exists(os.path.join(d, "summary.json")):
            r = libauc_row(d, args.rankrisk)
            if r is not None:
                rows.append(("LibAUC 2.0.1 (PyTorch)", name, r))
    if not rows:
        print(f"no runs under {args.out}", file=sys.stderr)
        return 2
    print("| library | method | best pass | test AUC [95% CI] | test pAUC[0.05, 0.5] [95% CI] "
          "| median ms/step | train s | eval s | train + eval s |")
    print("|---|---|---|---|---|---:|---:|---:|---:|")
    for lib, name, r in rows:
        print(f"| {lib} | {name} | {r['best']} | {r['auc']} | {r['pauc']} | {r['ms']:.1f} | "
              f"{r['train']:.0f} | {r['eval']:.0f} | {r['wall']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
