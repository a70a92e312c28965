"""LibAUC 2.0.1's STACO (`libauc.losses.auc.tpAUC_CVaR_loss`) on fixed batches, written out
for tests/objectives_api.rs, which runs our `Staco` on the same logits, labels and ids and
compares the score gradients and the state after every step (issue 42).

    python benches/peers/staco_fixture.py > tests/data/staco_libauc.json

LibAUC takes the scores as given; ours are sigmoid(logit), so LibAUC gets sigmoid(logit) and
its gradient is in those scores (the test multiplies by h (1 - h)). LibAUC computes in float32
(its state is float32), ours in f64 from the same float32 logits.
"""
import json

import torch
from libauc.losses.auc import tpAUC_CVaR_loss

N = 12
POSITIVE = [0, 3, 5, 8, 10]  # ids of the positives of the 12-sample training set
SETTINGS = [
    dict(threshold=0.5, alpha=0.1, beta_0=0.1, beta_1=0.1, theta_0=0.5, theta_1=0.5),
    dict(threshold=1.0, alpha=0.9, beta_0=0.3, beta_1=0.2, theta_0=0.3, theta_1=0.4),
]


def batches(seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(6):
        ids = torch.randperm(N, generator=g)[:8].tolist()
        if not any(i in POSITIVE for i in ids) or all(i in POSITIVE for i in ids):
            continue
        logits = (torch.randn(len(ids), generator=g) * 1.5).tolist()
        out.append((ids, logits))
    return out


cases = []
for k, s in enumerate(SETTINGS):
    loss_fn = tpAUC_CVaR_loss(data_length=N, device=torch.device("cpu"), **s)
    steps = []
    for ids, logits in batches(k):
        labels = [1.0 if i in POSITIVE else 0.0 for i in ids]
        h = torch.sigmoid(torch.tensor(logits)).requires_grad_()
        loss = loss_fn(h, torch.tensor(labels), torch.tensor(ids))
        loss.backward()
        steps.append(dict(
            ids=ids,
            logits=logits,
            labels=labels,
            grad_scores=h.grad.tolist(),
            duals=[float(loss_fn.dual_var[i]) for i in POSITIVE],
            thresholds=[float(loss_fn.s1[i]) for i in POSITIVE],
            global_threshold=float(loss_fn.s2),
        ))
    cases.append(dict(settings=s, steps=steps))
print(json.dumps(dict(source="libauc 2.0.1 tpAUC_CVaR_loss", n=N, positive=POSITIVE,
                      cases=cases), indent=1))
