//! Parameter-wise terms of a training objective for any Burn module, built on the device with
//! a [`ModuleVisitor`] so that one backward pass also differentiates them: the squared norm
//! `||w||^2` (for `g(w) = mu/2 ||w||^2`) and the squared distance `||w - w_k||^2` to a snapshot
//! (the proximal term `r/2 ||w - w_k||^2` of Algorithm 1's w-step); [`DeviceTerms`], the
//! terms the core's objectives ask for ([`ParameterTerms`]) on the device.

use std::collections::HashMap;

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::tensor::Tensor;
use rankrisk_core::objective::ParameterTerms;
use rankrisk_core::objective::aucm::AucM;
use rankrisk_core::objective::deep_admm::DeepAdmm;

fn flat<const D: usize>(t: Tensor<D>) -> Tensor<1> {
    let n = t.shape().num_elements();
    t.reshape([n])
}

/// Copies of a module's float parameters outside any autodiff graph, keyed by parameter id.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    values: HashMap<ParamId, Tensor<1>>,
}

impl Snapshot {
    /// The current parameters of `module`.
    pub fn of<M: Module>(module: &M) -> Self {
        struct Take<'a>(&'a mut HashMap<ParamId, Tensor<1>>);
        impl ModuleVisitor for Take<'_> {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                // Plain (non-autodiff) values: a snapshot never joins a recorded graph.
                self.0.insert(param.id, flat(param.val().inner()));
            }
        }
        let mut values = HashMap::new();
        module.visit(&mut Take(&mut values));
        Snapshot { values }
    }

    /// Number of parameter tensors held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no parameter is held.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

struct Accumulate<'a> {
    snapshot: Option<&'a Snapshot>,
    sum: Option<Tensor<1>>,
}

impl ModuleVisitor for Accumulate<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let mut v = flat(param.val());
        if let Some(s) = self.snapshot
            && let Some(old) = s.values.get(&param.id)
        {
            let old = if v.is_autodiff() {
                old.clone().autodiff()
            } else {
                old.clone()
            };
            v = v - old;
        }
        let term = v.powi_scalar(2).sum();
        self.sum = Some(match self.sum.take() {
            Some(acc) => acc + term,
            None => term,
        });
    }
}

/// `||w||^2` over every float parameter of `module` (a one-element tensor on its device, in
/// the autodiff graph when the module is). `None` for a module without parameters.
pub fn squared_norm<M: Module>(module: &M) -> Option<Tensor<1>> {
    let mut acc = Accumulate {
        snapshot: None,
        sum: None,
    };
    module.visit(&mut acc);
    acc.sum
}

/// `||w - w_k||^2` over every float parameter of `module`, `w_k` from `snapshot` (parameters
/// missing from the snapshot count as `||w||^2`).
pub fn squared_distance<M: Module>(module: &M, snapshot: &Snapshot) -> Option<Tensor<1>> {
    let mut acc = Accumulate {
        snapshot: Some(snapshot),
        sum: None,
    };
    module.visit(&mut acc);
    acc.sum
}

/// `norm ||w||^2 + distance ||w - w_k||^2` of [`ParameterTerms`] over every float parameter of
/// `module` (`w_k` from `snapshot`), a term left out when its coefficient is 0; `None` when
/// both are or the module has no parameters.
pub fn parameter_terms<M: Module>(
    module: &M,
    snapshot: &Snapshot,
    terms: ParameterTerms,
) -> Option<Tensor<1>> {
    let norm = if terms.norm > 0.0 {
        squared_norm(module).map(|t| t.mul_scalar(terms.norm))
    } else {
        None
    };
    let distance = if terms.distance > 0.0 {
        squared_distance(module, snapshot).map(|t| t.mul_scalar(terms.distance))
    } else {
        None
    };
    match (norm, distance) {
        (Some(n), Some(d)) => Some(n + d),
        (n, d) => n.or(d),
    }
}

/// The device side of an objective whose loss has terms over the model's parameters (AUC-M's
/// PESG regularization, the deep ADMM's `g(w)` and proximal term): the tensor to add to the
/// loss before `backward`.
pub trait DeviceTerms {
    /// The objective's [`ParameterTerms`] for `model`, `reference` the snapshot its loop took
    /// (AUC-M: at the last `decay`; the deep ADMM: after `outer_step`); `None` when it has
    /// none.
    fn device_terms<M: Module>(&self, model: &M, reference: &Snapshot) -> Option<Tensor<1>>;
}

impl DeviceTerms for AucM {
    /// `weight_decay/2 ||w||^2 + 1/(2 gamma) ||w - w_ref||^2`.
    fn device_terms<M: Module>(&self, model: &M, reference: &Snapshot) -> Option<Tensor<1>> {
        parameter_terms(model, reference, self.parameter_terms())
    }
}

impl DeviceTerms for DeepAdmm {
    /// `mu/2 ||w||^2 + r/2 ||w - w_k||^2`.
    fn device_terms<M: Module>(&self, model: &M, reference: &Snapshot) -> Option<Tensor<1>> {
        parameter_terms(model, reference, self.parameter_terms())
    }
}
