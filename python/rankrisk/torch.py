"""rankrisk's per-batch pAUC objectives as PyTorch losses (``torch`` is imported here only).

Each loss is called as LibAUC's are, ``loss(y_pred, y_true, index)``, and keeps its per-sample
state (thresholds, moving averages, duals, weights) in Rust on the CPU: one copy of the batch's
scores to the host, the update, and the score gradient back to ``y_pred``'s device and dtype.

- ``y_pred``: the model's **logits**, shape ``(B,)`` or ``(B, 1)``: rankrisk applies the
  sigmoid itself. LibAUC's losses take ``torch.sigmoid(logits)`` instead: build the losses
  that have a LibAUC counterpart (SOPA, SOPAs, SOTAs, STACO, AUCM) with
  ``inputs="probabilities"`` to pass those (rankrisk then takes their logit: the same
  objective and gradient); with the default ``inputs="logits"`` they refuse a batch whose
  values all lie in [0, 1] and are not all equal, as probabilities, so that a ported LibAUC
  loop never squashes twice in silence (docs/GUIDE.md, "From Python");
- ``y_true``: 0 / 1 (or -1 / +1, bool), shape as ``y_pred``;
- ``index``: each sample's position in the training set, ``0 <= index < len(labels)``
  (LibAUC 2.0.1's ``pAUC_CVaR_Loss`` and ``tpAUC_KL_Loss`` take the same dataset index; its
  SOPA-s tutorial's dataset gives each positive's index among the positives and -1 for the
  negatives, which is refused here: give every sample its dataset index).

Each loss is built from the training set's labels (id order) and its settings by keyword, with
LibAUC 2.0.1's defaults: ``SOPA(labels, beta=0.2)``. ``state_dict()`` holds the whole state
(``load_state_dict`` puts it back, so that a stopped run resumes bit for bit) with what made
it, the entries a Burn record of the objective holds (``settings``, ``training_labels``): a
state of another setting or another training set is refused naming which. A loss survives
``copy.deepcopy`` (an independent copy), ``pickle`` and ``torch.save(module)``. Under
``torch.distributed`` the batches of all ranks are gathered before the update, as LibAUC 2.0
does: every rank runs the same update on the whole batch, and each rank's gradient is scaled
by the world size so that DDP's average gives the one-process gradient of the concatenated
batch.

The score gradients equal LibAUC 2.0.1's step after step (SOPA, SOPA-s, SOTA-s, STACO, to
float32 rounding: ``python/tests/test_torch.py``); the returned value is the objective's batch
estimate (the CVaR or KL form with its thresholds or averages), which LibAUC's differs from
after the first step: LibAUC returns the surrogate its gradient comes from.

- :class:`SOPA` (LibAUC's ``pAUC_CVaR_Loss``), :class:`SOPAs` (``pAUC_DRO_Loss``),
  :class:`SOTAs` (``tpAUC_KL_Loss``), :class:`STACO` (``tpAUC_CVaR_loss``), :class:`AUCM`
  (``AUCMLoss``; its PESG regularization of the weights is the optimizer's), and the
  instance-wise :class:`PAUCI` and :class:`UPAUCI` (Shao et al.), :class:`MiniBatchPAUC`
  (the pAUC paper's mini-batch baseline; LibAUC has none), and :class:`DeepADMM` (the
  rank-based paper's ADMM for deep models, with an outer step between passes).

AGD-SBCD's deep form is not a loss: it updates the weights itself (eq. (14), no optimizer) and
runs in rankrisk's own loop (``rankrisk train --method sbcd``); docs/GUIDE.md ("From Python")
says what a PyTorch loop would have to do for it.
"""

import json
import warnings

import numpy as np
import torch

from . import _rankrisk

__all__ = [
    "SOPA", "SOPAs", "SOTAs", "STACO", "PAUCI", "UPAUCI", "AUCM", "MiniBatchPAUC", "DeepADMM",
    "DualSampler", "IndexedDataset",
]


def _host(t, dtype):
    return t.detach().reshape(-1).to("cpu", dtype).numpy()


def _gather(t):
    """All ranks' ``t`` concatenated (rank order) under torch.distributed, else ``t``."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return t, 0, 1
    world = dist.get_world_size()
    parts = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(parts, t.contiguous())
    return torch.cat(parts), dist.get_rank(), world


class _Step(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y_pred, y_true, index, objective, inputs):
        scores = y_pred.detach().reshape(-1)
        labels = y_true.detach().reshape(-1)
        ids = index.detach().reshape(-1)
        if not (len(scores) == len(labels) == len(ids)):
            raise ValueError(
                f"y_pred has {len(scores)} scores, y_true {len(labels)} labels, index "
                f"{len(ids)} ids: one of each per sample is needed"
            )
        _check_inputs(scores, ids, inputs)
        probabilities = inputs == "probabilities"
        all_scores, rank, world = _gather(scores)
        all_labels, _, _ = _gather(labels)
        all_ids, _, _ = _gather(ids)
        host = _host(all_scores, torch.float64)
        if probabilities:
            # LibAUC's inputs, sigmoid(logit): the objective sees their logit, whose sigmoid
            # is the probability again; dL/dp = dL/ds / (p (1 - p)).
            p = _clipped(host)
            host = _logit(p)
        loss, grad = objective.batch_gradient(
            host,
            _host(all_labels, torch.float64),
            _host(all_ids, torch.int64),
        )
        grad = np.asarray(grad, dtype=np.float64)
        if probabilities:
            grad = grad / (p * (1.0 - p))
        b = len(scores)
        grad = torch.from_numpy(grad[rank * b : (rank + 1) * b]) * world
        ctx.save_for_backward(grad.to(y_pred.device, y_pred.dtype).reshape(y_pred.shape))
        return torch.tensor(loss, dtype=y_pred.dtype, device=y_pred.device)

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return grad * grad_output, None, None, None, None


# The probabilities LibAUC's convention passes are clipped to [_TINY, 1 - _TINY] before their
# logit is taken (a probability of exactly 0 or 1 has none).
_TINY = 1e-12
_INPUTS = ("logits", "probabilities")


def _clipped(p):
    return np.clip(p, _TINY, 1.0 - _TINY)


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _check_inputs(scores, ids, inputs):
    """Refuse what a LibAUC loop passes where rankrisk expects otherwise, saying what to change:
    ``inputs`` is the loss's convention, or ``None`` for a loss with no LibAUC counterpart (no
    check of the values' range)."""
    probabilities = inputs == "probabilities"
    if len(ids) and bool((ids < 0).any()):
        raise ValueError(
            f"index holds {int(ids.min())}: give every sample its position in the training "
            "set (LibAUC's SOPA-s tutorial gives the negatives -1 and each positive its index "
            "among the positives; rankrisk takes the dataset index of every sample)"
        )
    if len(scores) < 2:
        return
    lo, hi = float(scores.min()), float(scores.max())
    if probabilities and not (lo >= 0.0 and hi <= 1.0):
        raise ValueError(
            f"inputs='probabilities', but y_pred spans [{lo:.4g}, {hi:.4g}]: pass "
            "torch.sigmoid(logits), or build the loss with inputs='logits' and pass the logits"
        )
    # A constant batch (a zero-initialized last layer's logits) is no evidence either way.
    if inputs == "logits" and 0.0 <= lo < hi <= 1.0:
        raise ValueError(
            f"y_pred lies in [{lo:.4g}, {hi:.4g}], as probabilities do (LibAUC's losses take "
            "torch.sigmoid(logits)); rankrisk's take the logits and apply the sigmoid "
            "themselves: pass model(x) without the sigmoid, or build the loss with "
            "inputs='probabilities' to keep LibAUC's convention"
        )


class _Objective(torch.nn.Module):
    """A rankrisk objective as a PyTorch loss: state in Rust, in ``state_dict`` as extra state."""

    _kind = ""
    _defaults = {}
    # The losses with a LibAUC counterpart take ``inputs="probabilities"`` and refuse a batch of
    # probabilities passed as logits; the others take their scores as they come.
    _libauc = False

    def __init__(self, labels, inputs="logits", **settings):
        super().__init__()
        if inputs not in _INPUTS:
            raise ValueError(f"inputs={inputs!r}: one of {_INPUTS}")
        if inputs == "probabilities" and not self._libauc:
            raise ValueError(
                f"{type(self).__name__} has no LibAUC counterpart and takes the model's scores: "
                "inputs='logits'"
            )
        if isinstance(labels, torch.Tensor):
            labels = labels.detach().reshape(-1).cpu().numpy()
        labels = np.asarray(labels)
        if "Lambda" in settings:  # LibAUC's name (``lambda`` is a Python keyword)
            settings["lambda"] = settings.pop("Lambda")
        settings = {**self._defaults, **settings}
        self._settings = settings
        self._inputs = inputs
        self._objective = _rankrisk.Objective(self._kind, labels, json.dumps(settings))
        # Kept to rebuild the objective when the loss is copied or unpickled.
        self._labels = labels.copy()

    def forward(self, y_pred, y_true, index):
        """The batch's loss (a 0-d tensor on ``y_pred``'s device); its backward gives the
        objective's score gradient. Updates the state (one step)."""
        inputs = self._inputs if self._libauc else None
        return _Step.apply(y_pred, y_true, index, self._objective, inputs)

    @torch.no_grad()
    def evaluate(self, y_pred, y_true):
        """The objective's value on a batch of any data set (validation), nothing moved."""
        scores = _host(y_pred, torch.float64)
        if self._inputs == "probabilities":
            scores = _logit(_clipped(scores))
        return self._objective.evaluate(scores, _host(y_true, torch.float64))

    def get_extra_state(self):
        state = {name: torch.from_numpy(v) for name, v in self._objective.state().items()}
        # What made the state, as the Burn record holds it (compared on load).
        state.update(
            {f"provenance.{name}": torch.from_numpy(v)
             for name, v in self._objective.provenance().items()}
        )
        return state

    def set_extra_state(self, state):
        state = dict(state)
        made = {k[len("provenance."):]: state.pop(k) for k in list(state)
                if k.startswith("provenance.")}
        host = lambda v: np.ascontiguousarray(v.cpu().numpy(), dtype=np.float64)  # noqa: E731
        if made:
            self._objective.check_provenance(
                host(made.get("settings", torch.zeros(0))),
                host(made.get("training_labels", torch.zeros(0))),
            )
        elif self._objective.provenance():
            warnings.warn(
                f"{type(self).__name__}: this state_dict holds no record of the settings and "
                "training labels it was saved with (saved before rankrisk kept them): loaded "
                "unchecked",
                stacklevel=2,
            )
        self._objective.set_state({name: host(v) for name, v in state.items()})

    def __getstate__(self):
        # The Rust objective does not pickle: its state travels as arrays and the objective is
        # built again from the kept labels and settings.
        state = self.__dict__.copy()
        state["_objective"] = self._objective.state()
        return state

    def __setstate__(self, state):
        saved = state.pop("_objective")
        super().__setstate__(state)
        self._objective = _rankrisk.Objective(
            self._kind, self._labels, json.dumps(self._settings)
        )
        self._objective.set_state(saved)

    def extra_repr(self):
        settings = ", ".join(f"{k}={v!r}" for k, v in self._settings.items())
        return settings if self._inputs == "logits" else f"{settings}, inputs='probabilities'"


class SOPA(_Objective):
    """One-way pAUC over FPR [0, beta] by a CVaR of the hardest negatives (Zhu et al. 2022;
    LibAUC's ``pAUC_CVaR_Loss``): ``beta`` (0.2), ``margin`` (1.0), ``eta`` (0.1)."""

    _kind = "sopa"
    _libauc = True
    _defaults = {"beta": 0.2}


class SOPAs(_Objective):
    """One-way pAUC by KL-DRO over the negatives (LibAUC's ``pAUC_DRO_Loss``): ``Lambda``
    (1.0), ``gamma`` (0.9), ``margin`` (1.0)."""

    _kind = "sopa-s"
    _libauc = True


class SOTAs(_Objective):
    """Two-way pAUC by KL-DRO over both classes (LibAUC's ``tpAUC_KL_Loss``): ``Lambda``
    (1.0), ``tau`` (1.0), ``gamma_u``, ``gamma_v`` (LibAUC's ``gammas``, 0.9), ``margin``
    (1.0)."""

    _kind = "sota-s"
    _libauc = True


class STACO(_Objective):
    """The exact two-way pAUC (TPR >= 1 - theta_0, FPR <= theta_1) by nested CVaRs (LibAUC's
    ``tpAUC_CVaR_loss``): ``theta_0``, ``theta_1`` (0.5), ``margin`` (0.5), ``alpha``,
    ``beta_0``, ``beta_1`` (0.1)."""

    _kind = "staco"
    _libauc = True


class PAUCI(_Objective):
    """The instance-wise pAUC with softplus selection (Shao et al., PAUCI), its scalars by
    SGDA on the CPU: ``alpha``, ``beta``, ``kappa``, ``omega``, ``lr``, ``gamma_step``
    (``"descent"``, the released code's and the default, or ``"ascent"``, the paper's)."""

    _kind = "pauci"


class UPAUCI(_Objective):
    """The instance-wise pAUC with one selection weight per negative (UPAUCI), the weights and
    scalars on the CPU: ``alpha``, ``beta``, ``omega``, ``lr``, ``lr_weights``,
    ``initial_weight``, ``weight_step`` (``"paper"`` or ``"exact"``)."""

    _kind = "upauci"


class AUCM(_Objective):
    """The AUC min-max margin loss (Yuan et al. 2021; LibAUC's ``AUCMLoss``) with PESG's
    updates of ``a``, ``b``, ``alpha`` on the CPU: ``imratio`` (None: the labels' share),
    ``margin`` (1.0), ``lr`` (0.1, the model's optimizer should use the same), ``gamma``
    (500), ``weight_decay``; the weights' PESG terms are the optimizer's."""

    _kind = "aucm"
    _libauc = True


class MiniBatchPAUC(_Objective):
    """The naive mini-batch pAUC (Kar et al. 2014, the pAUC paper's "MB" baseline): eq. (3)'s
    pairwise surrogate over FPR ``[alpha, beta]`` on each batch alone, no state: ``alpha`` and
    ``beta`` (required), ``loss`` (``"logistic"``, the paper's, or ``"squared_hinge"``)."""

    _kind = "mb-pauc"


class DeepADMM(_Objective):
    """A rank-based risk (eq. (1) of the rank-based paper: CVaR, extremile, ESRM, top-k, AoRR,
    ...) for a deep model by the paper's ADMM (Algorithm 1), the w-step by the model's own
    optimizer: ``weights`` (required, a spec as ``fit-linear --objective`` takes it,
    ``"cvar:q=0.8"``), ``loss`` (``"logistic"``; ``"hinge"``, ...), ``l2`` (``mu`` of
    ``g(w) = mu/2 ||w||^2``, 0), ``r`` (the w-step's proximal weight, 0). The per-sample ``z``
    and multipliers live in Rust; ``state_dict`` holds them, the penalty and, for ``r > 0``, the
    parameters' snapshot ``w_k``.

    The loop: before each pass, :meth:`outer_step` with the scores of the whole training set
    (id order) and the model (the dual step, the penalty's update and the z-step by PAVA);
    within the pass, each batch's loss is ``loss_fn(logits, y, index) +
    loss_fn.parameter_terms(model)``::

        for epoch in range(epochs):
            with torch.no_grad():
                loss_fn.outer_step(model(x_train).squeeze(1), model)
            for x, y, index in loader:
                loss = loss_fn(model(x).squeeze(1), y, index) + loss_fn.parameter_terms(model)
                optimizer.zero_grad(); loss.backward(); optimizer.step()
    """

    _kind = "deep-admm"

    def __init__(self, labels, weights, inputs="logits", **settings):
        super().__init__(labels, inputs=inputs, weights=weights, **settings)
        self._snapshot = None

    def outer_step(self, train_scores, model=None):
        """Steps 1-3 of an outer iteration from ``train_scores`` (every training sample's
        logit, id order); ``model``'s parameters become the proximal term's ``w_k``. Returns
        ``{"k", "rank_loss", "primal_residual", "rho"}``."""
        k, rank_loss, primal, rho = self._objective.outer_step(
            _host(train_scores, torch.float64)
        )
        if model is not None:
            self._snapshot = [p.detach().clone() for p in model.parameters()]
        return {"k": k, "rank_loss": rank_loss, "primal_residual": primal, "rho": rho}

    def parameter_terms(self, model):
        """``mu/2 ||w||^2 + r/2 ||w - w_k||^2`` over ``model``'s parameters (a 0-d tensor; 0
        when both weights are 0)."""
        norm, distance = self._objective.parameter_terms()
        params = list(model.parameters())
        total = params[0].new_zeros(())
        if norm:
            total = total + norm * sum((p * p).sum() for p in params)
        if distance:
            if self._snapshot is None:
                raise RuntimeError(
                    "DeepADMM with r > 0: call outer_step(train_scores, model) first (the "
                    "proximal term needs the snapshot w_k)"
                )
            total = total + distance * sum(
                ((p - q) * (p - q)).sum() for p, q in zip(params, self._snapshot)
            )
        return total

    def get_extra_state(self):
        state = super().get_extra_state()
        for i, q in enumerate(self._snapshot or []):
            state[f"snapshot.{i}"] = q
        return state

    def set_extra_state(self, state):
        state = dict(state)
        names = sorted((k for k in state if k.startswith("snapshot.")),
                       key=lambda k: int(k.split(".")[1]))
        snapshot = [state.pop(k) for k in names]
        super().set_extra_state(state)
        self._snapshot = snapshot or None


class DualSampler(torch.utils.data.Sampler):
    """Class-balanced batches, as LibAUC's ``DualSampler``: every batch of ``batch_size`` holds
    ``round(sampling_rate * batch_size)`` positives (at least one), every negative comes once an
    epoch in a seeded order that changes from epoch to epoch, and the positives cycle through
    seeded permutations of their own (the rare class is seen many times an epoch). The draws are
    rankrisk's run driver's (the core's sampler): the same seed, labels, batch and share give the
    same batches as ``rankrisk train``.

    Use it as a ``DataLoader``'s ``sampler`` with the same ``batch_size`` (and
    ``drop_last=False``); each ``iter`` is the next epoch (``set_epoch(e)`` chooses one, as
    ``DistributedSampler``'s). Under ``torch.distributed`` (or with ``num_replicas`` and
    ``rank``) every global batch of ``batch_size * num_replicas`` samples is dealt out by
    position, sample ``i`` to rank ``i % num_replicas``, so each rank's share holds both classes
    and the ranks together see the one-process sequence of the larger batch.

    ``labels``: the training set's labels in index order (0 / 1, -1 / +1, bool).
    """

    def __init__(self, labels, batch_size, sampling_rate=0.5, seed=0, num_replicas=None,
                 rank=None):
        if isinstance(labels, torch.Tensor):
            labels = labels.detach().reshape(-1).cpu().numpy()
        labels = np.asarray(labels)
        dist = torch.distributed
        running = dist.is_available() and dist.is_initialized()
        if num_replicas is None:
            num_replicas = dist.get_world_size() if running else 1
        if rank is None:
            rank = dist.get_rank() if running else 0
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank {rank} is not in [0, num_replicas = {num_replicas})")
        self.batch_size, self.num_replicas, self.rank = int(batch_size), num_replicas, rank
        self._sampler = _rankrisk.DualSampler(
            labels, self.batch_size * num_replicas, float(sampling_rate), int(seed)
        )
        self._global = self.batch_size * num_replicas
        self.epoch = 0

    def set_epoch(self, epoch):
        """The epoch the next ``iter`` draws (each ``iter`` moves on to the following one)."""
        self.epoch = int(epoch)

    def __iter__(self):
        bpe = self._sampler.batches_per_epoch()
        self._sampler.step = self.epoch * bpe
        self.epoch += 1
        for _ in range(bpe):
            yield from self._sampler.next_batch()[self.rank::self.num_replicas]

    def __len__(self):
        bpe = self._sampler.batches_per_epoch()
        last = self._sampler.samples_per_epoch() - (bpe - 1) * self._global
        return (bpe - 1) * self.batch_size + len(range(self.rank, last, self.num_replicas))

    def state_dict(self):
        """The epoch the next ``iter`` draws (for resuming)."""
        return {"epoch": self.epoch}

    def load_state_dict(self, state):
        self.epoch = int(state["epoch"])


class IndexedDataset(torch.utils.data.Dataset):
    """``dataset`` with each item's index appended: ``(x, y)`` becomes ``(x, y, index)``, the
    ``index`` rankrisk's losses (and LibAUC's) take."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        item = self.dataset[index]
        return (*item, index) if isinstance(item, tuple) else (item, index)

