"""rankrisk.torch's losses against LibAUC 2.0.1's, time per batch of scores (issue 58).

    python benches/python_objectives.py [--batch 2048] [--steps 200] [--threads 2]

Run it with a Python that has torch, libauc 2.0.1 and the rankrisk wheel (benches/peers/README.md
makes such a venv; `pip install ./python` adds rankrisk). A training set of 100,000 samples (10%
positives); each step draws a batch with both classes, makes float32 logits that require a
gradient, and times the loss's forward and backward: ours on the logits (the state in Rust,
one copy to the host and the gradient back), LibAUC's on their sigmoid (its state in torch
tensors). Steps alternate between the two sides; the table gives the median and the 90th
percentile in microseconds and the ratio of the medians. Both sides see the same batches, and
the script checks that their score gradients agree (relative L2 difference at most 1e-3:
LibAUC computes the pair losses in float32, ours in float64, so on a million pairs a few fall
on the other side of a threshold; python/tests/test_torch.py compares small batches entry by
entry).
"""

import argparse
import os
import statistics
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import torch
    from libauc.losses import pAUC_CVaR_Loss, pAUC_DRO_Loss, tpAUC_KL_Loss
    from libauc.losses.auc import tpAUC_CVaR_loss

    import rankrisk.torch as rt

    torch.set_num_threads(args.threads)
    n = 100_000
    labels = torch.zeros(n, dtype=torch.long)
    labels[: n // 10] = 1
    cpu = torch.device("cpu")
    cases = [
        ("SOPA", lambda: rt.SOPA(labels, beta=0.2, eta=0.1, margin=1.0),
         lambda: pAUC_CVaR_Loss(data_len=n, pos_len=n // 10, beta=0.2, eta=0.1, margin=1.0,
                                device=cpu)),
        ("SOPA-s", lambda: rt.SOPAs(labels),
         lambda: pAUC_DRO_Loss(data_len=n, gamma=0.9, margin=1.0, Lambda=1.0, device=cpu)),
        ("SOTA-s", lambda: rt.SOTAs(labels),
         lambda: tpAUC_KL_Loss(data_len=n, tau=1.0, Lambda=1.0, gammas=(0.9, 0.9), margin=1.0,
                               device=cpu)),
        ("STACO", lambda: rt.STACO(labels),
         lambda: tpAUC_CVaR_loss(data_length=n, device=cpu, threshold=0.5, alpha=0.1,
                                 beta_0=0.1, beta_1=0.1, theta_0=0.5, theta_1=0.5)),
    ]
    rng = np.random.default_rng(0)
    pos, neg = np.arange(n // 10), np.arange(n // 10, n)
    half = args.batch // 2
    rows = []
    for name, ours_fn, theirs_fn in cases:
        ours, theirs = ours_fn(), theirs_fn()
        t_ours, t_theirs, worst = [], [], 0.0
        for step in range(args.steps + 10):
            ids = torch.from_numpy(np.concatenate([rng.choice(pos, half, replace=False),
                                                   rng.choice(neg, half, replace=False)]))
            y = labels[ids]
            logit = torch.randn(args.batch) * 1.5
            a = logit.clone().requires_grad_()
            b = logit.clone().requires_grad_()
            for side in ((0, 1) if step % 2 == 0 else (1, 0)):
                t = time.perf_counter()
                if side == 0:
                    ours(a, y, ids).backward()
                else:
                    theirs(torch.sigmoid(b), y.float(), ids).backward()
                dt = time.perf_counter() - t
                if step >= 10:  # warm-up
                    (t_ours if side == 0 else t_theirs).append(dt * 1e6)
            # Relative L2: LibAUC's float32 pair losses put a few pairs on the other side of a
            # threshold than our f64 ones on a batch of a million pairs (each such flip moves
            # single entries), so the entries are not compared one by one here.
            worst = max(worst, ((a.grad - b.grad).norm() / (b.grad.norm() + 1e-30)).item())
        if worst > 1e-3:
            raise SystemExit(f"{name}: the score gradients differ (relative {worst:.2e})")
        q = lambda v, p: sorted(v)[int(p * (len(v) - 1))]  # noqa: E731
        rows.append((name, statistics.median(t_ours), q(t_ours, 0.9),
                     statistics.median(t_theirs), q(t_theirs, 0.9)))
        print(f"{name} done (largest relative L2 gradient difference {worst:.1e})", flush=True)
    print()
    print(f"| loss (batch {args.batch}) | rankrisk median us | p90 | LibAUC median us | p90 | ratio |")
    print("|---|---|---|---|---|---|")
    for name, om, o9, tm, t9 in rows:
        print(f"| {name} | {om:.0f} | {o9:.0f} | {tm:.0f} | {t9:.0f} | {om / tm:.2f}x |")


if __name__ == "__main__":
    main()
