//! Parameter-wise terms of a training objective for any Burn module, built on the device with
//! a [`ModuleVisitor`] so that one backward pass also differentiates them: the squared norm
//! `||w||^2` (for `g(w) = mu/2 ||w||^2`) and the squared distance `||w - w_k||^2` to a snapshot
//! (the proximal term `r/2 ||w - w_k||^2` of Algorithm 1's w-step).

use std::collections::HashMap;

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::tensor::Tensor;

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
