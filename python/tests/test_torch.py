"""rankrisk.torch: the losses' gradients, resume from state_dict, torch.distributed, LibAUC."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
from rankrisk import torch as rt  # noqa: E402

N, D = 60, 4
LOSSES = [
    (rt.SOPA, {"beta": 0.3}),
    (rt.SOPAs, {}),
    (rt.SOTAs, {}),
    (rt.STACO, {}),
    (rt.PAUCI, {}),
    (rt.UPAUCI, {"weight_step": "exact"}),
    (rt.AUCM, {}),
    (rt.MiniBatchPAUC, {"alpha": 0.05, "beta": 0.5}),
    (rt.DeepADMM, {"weights": "cvar:q=0.5", "l2": 1e-3}),
]


def dataset(seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = (torch.arange(N) % 4 == 0).long()  # 15 positives
    x = torch.randn(N, D, generator=g) + labels[:, None].float()
    return x, labels


def batches(steps, seed=1, size=16):
    """Index batches with both classes: 4 positives and 12 negatives each."""
    rng = np.random.default_rng(seed)
    pos, neg = np.arange(0, N, 4), np.setdiff1d(np.arange(N), np.arange(0, N, 4))
    return [
        torch.from_numpy(np.concatenate([rng.choice(pos, 4, replace=False),
                                         rng.choice(neg, size - 4, replace=False)]))
        for _ in range(steps)
    ]


@pytest.mark.parametrize("loss_cls, settings", LOSSES)
def test_the_backward_gives_the_objectives_gradient(loss_cls, settings):
    x, labels = dataset()
    loss = loss_cls(labels, **settings)
    twin = loss_cls(labels, **settings)._objective  # the same objective, stepped by hand
    for ids in batches(3):
        logits = (x[ids] @ torch.ones(D) * 0.7).requires_grad_()
        value = loss(logits, labels[ids], ids)
        value.backward()
        expected_loss, expected_grad = twin.batch_gradient(
            logits.detach().double().numpy(), labels[ids].double().numpy(), ids.numpy()
        )
        assert value.item() == pytest.approx(expected_loss, rel=1e-6)
        assert np.array_equal(logits.grad.numpy(), expected_grad)


def train(loss, steps, model=None, opt=None, start=0):
    x, labels = dataset()
    torch.manual_seed(5)
    model = model or torch.nn.Linear(D, 1)
    opt = opt or torch.optim.Adam(model.parameters(), lr=0.05)
    for ids in batches(start + steps)[start:]:
        opt.zero_grad()
        loss(model(x[ids]).squeeze(1), labels[ids], ids).backward()
        opt.step()
    return model, opt


@pytest.mark.parametrize("loss_cls, settings", LOSSES)
def test_a_stopped_run_resumes_bit_for_bit(loss_cls, settings, tmp_path):
    _, labels = dataset()
    whole_loss = loss_cls(labels, **settings)
    whole, _ = train(whole_loss, 12)
    first_loss = loss_cls(labels, **settings)
    model, opt = train(first_loss, 5)
    path = tmp_path / "checkpoint.pt"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "loss": first_loss.state_dict()}, path)
    saved = torch.load(path)
    resumed_loss = loss_cls(labels, **settings)
    resumed_loss.load_state_dict(saved["loss"])
    model = torch.nn.Linear(D, 1)
    model.load_state_dict(saved["model"])
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    opt.load_state_dict(saved["opt"])
    resumed, _ = train(resumed_loss, 7, model, opt, start=5)
    for a, b in zip(whole.parameters(), resumed.parameters()):
        assert torch.equal(a, b)
    for (k1, v1), (k2, v2) in zip(whole_loss._objective.state().items(),
                                  resumed_loss._objective.state().items()):
        assert k1 == k2 and np.array_equal(v1, v2)


def test_bad_calls_raise_errors_that_name_them():
    _, labels = dataset()
    with pytest.raises(TypeError, match="no setting `bta`"):
        rt.SOPA(labels, bta=0.2)
    loss = rt.SOPA(labels)
    ids = torch.arange(8)
    with pytest.raises(ValueError, match="index\\[0\\] = 60"):
        loss(torch.zeros(8), labels[ids], ids + N)
    with pytest.raises(ValueError, match="not finite"):
        loss(torch.full((8,), float("nan")), labels[ids], ids)
    with pytest.raises(ValueError, match="one of each per sample"):
        loss(torch.zeros(8), labels[ids][:7], ids)
    state = loss.state_dict()
    state["_extra_state"] = {"nope": torch.zeros(3)}
    with pytest.raises(ValueError, match="no state `nope`"), pytest.warns(UserWarning):
        loss.load_state_dict(state)


def _rank(rank, world, settings_path, out_path):
    import torch.distributed as dist

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", os.environ["RR_PORT"]
    dist.init_process_group("gloo", rank=rank, world_size=world)
    x, labels = dataset()
    torch.manual_seed(5)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(D, 1))
    loss = rt.SOTAs(labels)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for ids in batches(4, size=16):
        mine = ids.view(world, -1)[rank]  # each rank its share of the batch
        opt.zero_grad()
        loss(model(x[mine]).squeeze(1), labels[mine], mine).backward()
        opt.step()
    if rank == 0:
        torch.save({"w": [p.detach() for p in model.module.parameters()],
                    "state": {k: torch.from_numpy(v) for k, v in loss._objective.state().items()}},
                   out_path)
    dist.destroy_process_group()


def test_two_gloo_processes_train_as_one_on_the_whole_batch(tmp_path):
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    import torch.multiprocessing as mp

    os.environ["RR_PORT"] = str(29500 + os.getpid() % 1000)
    out = tmp_path / "ddp.pt"
    # Batches of 16 whose halves both hold positives: rank 0 the first 8, rank 1 the rest.
    mp.spawn(_rank, args=(2, None, str(out)), nprocs=2, join=True)
    ddp = torch.load(out)
    x, labels = dataset()
    torch.manual_seed(5)
    model = torch.nn.Linear(D, 1)
    loss = rt.SOTAs(labels)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for ids in batches(4, size=16):
        opt.zero_grad()
        loss(model(x[ids]).squeeze(1), labels[ids], ids).backward()
        opt.step()
    for a, b in zip(model.parameters(), ddp["w"]):
        assert torch.allclose(a, b, rtol=1e-6, atol=1e-7)
    for k, v in loss._objective.state().items():
        assert np.array_equal(v, ddp["state"][k].numpy())


def _libauc_cases():
    libauc = pytest.importorskip("libauc", reason="libauc is not installed (benches/peers/README.md)")
    from libauc.losses import pAUC_CVaR_Loss, pAUC_DRO_Loss, tpAUC_KL_Loss
    from libauc.losses.auc import tpAUC_CVaR_loss

    cpu = torch.device("cpu")
    return libauc, [
        (rt.SOPA, {"beta": 0.3, "eta": 0.1, "margin": 1.0},
         lambda: pAUC_CVaR_Loss(data_len=N, pos_len=N // 4, beta=0.3, eta=0.1, margin=1.0,
                                device=cpu)),
        (rt.SOPAs, {"Lambda": 1.0, "gamma": 0.9, "margin": 1.0},
         lambda: pAUC_DRO_Loss(data_len=N, gamma=0.9, margin=1.0, Lambda=1.0, device=cpu)),
        (rt.SOTAs, {"Lambda": 1.0, "tau": 1.0, "gamma_u": 0.9, "gamma_v": 0.9, "margin": 1.0},
         lambda: tpAUC_KL_Loss(data_len=N, tau=1.0, Lambda=1.0, gammas=(0.9, 0.9), margin=1.0,
                               device=cpu)),
        (rt.STACO, {"theta_0": 0.5, "theta_1": 0.5, "margin": 0.5, "alpha": 0.1, "beta_0": 0.1,
                    "beta_1": 0.1},
         lambda: tpAUC_CVaR_loss(data_length=N, device=cpu, threshold=0.5, alpha=0.1,
                                 beta_0=0.1, beta_1=0.1, theta_0=0.5, theta_1=0.5)),
    ]


@pytest.mark.parametrize("case", range(4))
def test_loss_and_score_gradients_equal_libauc_2_0_1(case):
    libauc, cases = _libauc_cases()
    if libauc.__version__ != "2.0.1":
        pytest.skip(f"libauc {libauc.__version__}, not 2.0.1")
    ours_cls, settings, theirs_fn = cases[case]
    x, labels = dataset()
    ours, theirs = ours_cls(labels, **settings), theirs_fn()
    g = torch.Generator().manual_seed(case)
    # LibAUC takes sigmoid(logit), rankrisk the logit: the gradients compare in the logits.
    # Six steps: the gradients agree at every one, so the states move alike. The values agree
    # where the two definitions meet (SOPA's and STACO's first step, thresholds at 0): LibAUC
    # returns the surrogate its gradient comes from, rankrisk the objective's batch estimate
    # (the CVaR or KL form with its thresholds or averages).
    for step, ids in enumerate(batches(6, seed=case)):
        logit = torch.randn(len(ids), generator=g) * 1.5
        a = logit.clone().requires_grad_()
        b = logit.clone().requires_grad_()
        value_ours = ours(a, labels[ids], ids)
        value_ours.backward()
        value_theirs = theirs(torch.sigmoid(b), labels[ids].float(), ids)
        value_theirs.backward()
        if step == 0 and ours_cls in (rt.SOPA, rt.STACO):
            assert value_ours.item() == pytest.approx(value_theirs.item(), rel=1e-6)
        scale = b.grad.abs().max().item()
        assert (a.grad - b.grad).abs().max().item() <= 1e-6 * scale, (step, a.grad, b.grad)


def admm_run(epochs, loss, model, opt, start=0):
    """The deep ADMM's loop: an outer step before each pass, the parameter terms in the loss."""
    x, labels = dataset()
    for epoch in range(start, epochs):
        with torch.no_grad():
            record = loss.outer_step(model(x).squeeze(1), model)
        assert record["k"] == epoch + 1
        for ids in batches(4, seed=epoch):
            opt.zero_grad()
            value = loss(model(x[ids]).squeeze(1), labels[ids], ids) + loss.parameter_terms(model)
            value.backward()
            opt.step()
    return model, opt


def test_the_deep_admm_loop_resumes_bit_for_bit_and_lowers_the_rank_risk(tmp_path):
    _, labels = dataset()
    settings = {"weights": "cvar:q=0.7", "loss": "logistic", "l2": 1e-3, "r": 0.5}
    torch.manual_seed(3)
    start = torch.nn.Linear(D, 1)
    first = {k: v.clone() for k, v in start.state_dict().items()}

    def fresh():
        model = torch.nn.Linear(D, 1)
        model.load_state_dict(first)
        return model, torch.optim.SGD(model.parameters(), lr=0.05)

    whole_loss = rt.DeepADMM(labels, **settings)
    whole, _ = admm_run(6, whole_loss, *fresh())
    # The rank-based risk (CVaR of the logistic losses over the training set) went down.
    x, _ = dataset()
    with torch.no_grad():
        before = whole_loss.evaluate(fresh()[0](x).squeeze(1), labels)
        after = whole_loss.evaluate(whole(x).squeeze(1), labels)
    assert after < before, (before, after)
    # Stopped after 3 passes, saved, resumed in fresh objects: the same weights and state.
    part_loss = rt.DeepADMM(labels, **settings)
    model, opt = admm_run(3, part_loss, *fresh())
    path = tmp_path / "admm.pt"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "loss": part_loss.state_dict()}, path)
    saved = torch.load(path)
    resumed_loss = rt.DeepADMM(labels, **settings)
    resumed_loss.load_state_dict(saved["loss"])
    model, opt = fresh()
    model.load_state_dict(saved["model"])
    opt.load_state_dict(saved["opt"])
    resumed, _ = admm_run(6, resumed_loss, model, opt, start=3)
    for a, b in zip(whole.parameters(), resumed.parameters()):
        assert torch.equal(a, b)
    for (k1, v1), (k2, v2) in zip(whole_loss._objective.state().items(),
                                  resumed_loss._objective.state().items()):
        assert k1 == k2 and np.array_equal(v1, v2)


def test_the_deep_admms_parameter_terms_are_its_formula():
    _, labels = dataset()
    loss = rt.DeepADMM(labels, weights="extremile:r=2", l2=0.2, r=0.6)
    model = torch.nn.Linear(D, 1)
    with pytest.raises(RuntimeError, match="call outer_step"):
        loss.parameter_terms(model)
    x, _ = dataset()
    with torch.no_grad():
        loss.outer_step(model(x).squeeze(1), model)
        w_k = [p.clone() for p in model.parameters()]
        for p in model.parameters():
            p.add_(0.1)
    expected = sum(0.1 * (p * p).sum() + 0.3 * ((p - q) ** 2).sum()
                   for p, q in zip(model.parameters(), w_k))
    assert loss.parameter_terms(model).item() == pytest.approx(expected.item(), rel=1e-6)
    with pytest.raises(TypeError, match="no outer step"):
        rt.SOPA(labels)._objective.outer_step(np.zeros(N))
    with pytest.raises(ValueError, match="weights \"cvar:q=2\""):
        rt.DeepADMM(labels, weights="cvar:q=2")


@pytest.mark.parametrize("loss_cls, settings", LOSSES)
def test_a_loss_copies_and_pickles_with_its_state(loss_cls, settings, tmp_path):
    import copy
    import pickle

    _, labels = dataset()
    loss = loss_cls(labels, **settings)
    train(loss, 3)
    twin = copy.deepcopy(loss)
    state = {k: v.copy() for k, v in loss._objective.state().items()}
    # The copy is independent: stepping it leaves the original where it was.
    train(twin, 2, start=3)
    for k, v in loss._objective.state().items():
        assert np.array_equal(v, state[k]), k
    # pickle and torch.save round-trip the whole loss, inside a model too.
    for back in (pickle.loads(pickle.dumps(loss)),):
        assert back.extra_repr() == loss.extra_repr()
        for k, v in back._objective.state().items():
            assert np.array_equal(v, state[k]), k
    holder = torch.nn.Module()
    holder.loss = loss
    torch.save(holder, tmp_path / "model.pt")
    back = torch.load(tmp_path / "model.pt", weights_only=False).loss
    for k, v in back._objective.state().items():
        assert np.array_equal(v, state[k]), k
    # The copies train on as the original would.
    a, b = pickle.loads(pickle.dumps(loss)), loss
    wa, _ = train(a, 2, start=3)
    wb, _ = train(b, 2, start=3)
    for p, q in zip(wa.parameters(), wb.parameters()):
        assert torch.equal(p, q)


def test_a_state_dict_loads_only_into_the_loss_that_made_it():
    _, labels = dataset()
    loss = rt.SOPA(labels, beta=0.3)
    train(loss, 2)
    state = loss.state_dict()
    with pytest.raises(ValueError, match="`beta` is 0.3 in the record, 0.1 in this SOPA"):
        rt.SOPA(labels, beta=0.1).load_state_dict(state)
    # Another training set with the same counts: the positives elsewhere.
    other = torch.roll(labels, 1)
    with pytest.raises(ValueError, match="another training set.*same counts, other labels"):
        rt.SOPA(other, beta=0.3).load_state_dict(state)
    rt.SOPA(labels, beta=0.3).load_state_dict(state)
    # A state saved before the provenance travelled loads, with a warning.
    old = {"_extra_state": {k: v for k, v in state["_extra_state"].items()
                            if not k.startswith("provenance.")}}
    with pytest.warns(UserWarning, match="loaded unchecked"):
        rt.SOPA(labels, beta=0.3).load_state_dict(old)


@pytest.mark.parametrize("loss_cls", [rt.SOPA, rt.SOPAs, rt.SOTAs, rt.STACO, rt.AUCM])
def test_libaucs_convention_is_a_setting_and_a_double_sigmoid_is_refused(loss_cls):
    _, labels = dataset()
    ours, theirs = loss_cls(labels), loss_cls(labels, inputs="probabilities")
    g = torch.Generator().manual_seed(3)
    for ids in batches(3):
        logit = torch.randn(len(ids), generator=g) * 1.5
        a = logit.clone().requires_grad_()
        b = logit.clone().requires_grad_()
        ours(a, labels[ids], ids).backward()
        # LibAUC's loop: the loss takes sigmoid(logits); the gradient reaches the logits alike.
        theirs(torch.sigmoid(b), labels[ids], ids).backward()
        assert torch.allclose(a.grad, b.grad, rtol=1e-4, atol=1e-7), (a.grad, b.grad)
    ids = batches(1)[0]
    probs = torch.sigmoid(torch.randn(len(ids), generator=g))
    with pytest.raises(ValueError, match="as probabilities do.*inputs='probabilities'"):
        loss_cls(labels)(probs, labels[ids], ids)
    with pytest.raises(ValueError, match="inputs='probabilities', but y_pred spans"):
        loss_cls(labels, inputs="probabilities")(torch.randn(len(ids)) * 3, labels[ids], ids)
    # LibAUC's tutorial index (-1 for the negatives) is refused, saying what to give.
    with pytest.raises(ValueError, match="dataset index of every sample"):
        loss_cls(labels)(torch.randn(len(ids)) * 3, labels[ids], torch.full_like(ids, -1))


def test_losses_without_a_libauc_counterpart_take_scores_as_they_come():
    _, labels = dataset()
    with pytest.raises(ValueError, match="no LibAUC counterpart"):
        rt.PAUCI(labels, inputs="probabilities")
    with pytest.raises(ValueError, match="inputs='probits'"):
        rt.SOPA(labels, inputs="probits")
    # Scores in [0, 1] are this loss's own (no LibAUC convention to confuse them with).
    ids = batches(1)[0]
    rt.MiniBatchPAUC(labels, alpha=0.05, beta=0.5)(torch.rand(len(ids)), labels[ids], ids)


def test_the_dual_sampler_balances_every_batch_and_covers_the_negatives():
    labels = (torch.arange(200) % 10 == 0).long()  # 20 positives, 180 negatives
    sampler = rt.DualSampler(labels, batch_size=16, sampling_rate=0.25, seed=3)
    epoch = list(sampler)
    assert len(epoch) == len(sampler)
    batches = [epoch[i:i + 16] for i in range(0, len(epoch), 16)]
    for b in batches[:-1]:
        assert int(labels[b].sum()) == 4
    negatives = [i for i in epoch if labels[i] == 0]
    assert sorted(negatives) == [i for i in range(200) if i % 10]  # each negative once
    # The next epoch reshuffles; set_epoch replays one; the same seed draws the same batches.
    again = list(sampler)
    assert again != epoch
    sampler.set_epoch(0)
    assert list(sampler) == epoch
    assert list(rt.DualSampler(labels, 16, 0.25, seed=3)) == epoch
    assert list(rt.DualSampler(labels, 16, 0.25, seed=4)) != epoch
    # Two ranks deal out the one-process batches of twice the size, both classes each.
    whole = list(rt.DualSampler(labels, 32, 0.25, seed=3))
    shares = [list(rt.DualSampler(labels, 16, 0.25, seed=3, num_replicas=2, rank=r))
              for r in (0, 1)]
    assert sorted(shares[0] + shares[1]) == sorted(whole)
    for r, share in enumerate(shares):
        assert len(share) == len(rt.DualSampler(labels, 16, 0.25, seed=3, num_replicas=2, rank=r))
        for i in range(0, len(share) - 16, 16):
            assert 0 < int(labels[share[i:i + 16]].sum()) < 16
    with pytest.raises(ValueError, match="DualSampler"):
        rt.DualSampler(torch.zeros(10), 4)


def test_a_loader_with_the_sampler_and_indices_trains_a_loss():
    x, labels = dataset()
    data = rt.IndexedDataset(torch.utils.data.TensorDataset(x, labels))
    assert data[7][2] == 7 and len(data) == N
    loader = torch.utils.data.DataLoader(
        data, batch_size=16, sampler=rt.DualSampler(labels, 16, sampling_rate=0.5, seed=0)
    )
    model = torch.nn.Linear(D, 1)
    loss_fn = rt.SOPAs(labels)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for xb, yb, index in loader:
        assert 0 < int(yb.sum()) < len(yb)
        opt.zero_grad()
        loss_fn(model(xb).squeeze(1), yb, index).backward()
        opt.step()
