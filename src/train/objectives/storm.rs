//! The momentum-corrected (STORM) direction of ASGDA for the parameters of any Burn module:
//! `v_1 = g(x_1; B_1)`, then `v_{t+1} = g(x_{t+1}; B_{t+1}) + (1 - rho_{t+1}) (v_t - g(x_t;
//! B_{t+1}))`, the two gradients of the same batch at the new and the previous point (Jiang et
//! al. 2025, Algorithm 1, after Huang et al., JMLR 2022). The network's step along it,
//! `x_{t+1} = (1 - eta_t) x_t + eta_t (x_t - nu v_t) = x_t - eta_t nu v_t` (no projection on
//! the network), is a plain SGD step of size `eta_t nu` on [`StormDirection::gradients`].
//!
//! One ASGDA step on a batch, with the scalars of PAUCI / UPAUCI
//! ([`InstanceWise`](crate::train::instance_pauc::InstanceWise)):
//!
//! 1. `old` = the batch's gradients at the current point (network and scalars);
//! 2. on the first step, the directions start at `old`;
//! 3. both move along the directions (SGD at `eta_t nu` for the network,
//!    `InstanceWise::asgda_move` for the scalars);
//! 4. after the first step, `new` = the same batch's gradients at the new point, and the
//!    directions are corrected with `rho_t` (`xi_t` for the maximized block).

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;

/// ASGDA's direction `v` for a module's parameters (one tensor per parameter, on the
/// module's device). Built empty; [`StormDirection::update`] starts or corrects it.
#[derive(Debug, Default)]
pub struct StormDirection {
    v: Option<GradientsParams>,
}

impl StormDirection {
    /// No direction yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether [`StormDirection::update`] has run.
    pub fn is_started(&self) -> bool {
        self.v.is_some()
    }

    /// `v <- new` (first call, `old` ignored) or `v <- new + (1 - rho) (v - old)`, parameter
    /// by parameter of `module`; a parameter without a gradient in `new` keeps `(1 - rho) (v -
    /// old)` (zero where it had none).
    pub fn update<M: Module>(
        &mut self,
        module: &M,
        new: GradientsParams,
        old: Option<GradientsParams>,
        rho: f64,
    ) {
        let Some(v) = self.v.take() else {
            self.v = Some(new);
            return;
        };
        struct Correct {
            new: GradientsParams,
            old: GradientsParams,
            v: GradientsParams,
            out: GradientsParams,
            keep: f64,
        }
        impl ModuleVisitor for Correct {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                let id = param.id;
                let carried = match (self.v.remove::<D>(id), self.old.remove::<D>(id)) {
                    (Some(v), Some(o)) => Some((v - o).mul_scalar(self.keep)),
                    (Some(v), None) => Some(v.mul_scalar(self.keep)),
                    (None, Some(o)) => Some(o.mul_scalar(-self.keep)),
                    (None, None) => None,
                };
                let next = match (self.new.remove::<D>(id), carried) {
                    (Some(n), Some(c)) => Some(n + c),
                    (Some(n), None) => Some(n),
                    (None, c) => c,
                };
                if let Some(t) = next {
                    self.out.register(id, t);
                }
            }
        }
        let mut visitor = Correct {
            new,
            old: old.unwrap_or_default(),
            v,
            out: GradientsParams::new(),
            keep: 1.0 - rho,
        };
        module.visit(&mut visitor);
        self.v = Some(visitor.out);
    }

    /// `v` as a module shaped like `model` (each parameter's value its direction, zeros where
    /// it has none; buffers as `model`'s), for a checkpoint; None before the first update.
    pub fn to_module<M: Module>(&self, model: &M) -> Option<M> {
        struct Fill<'a>(&'a GradientsParams);
        impl ModuleMapper for Fill<'_> {
            fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
                let v = self.0.get::<D>(param.id);
                param.map(|t| v.unwrap_or_else(|| t.zeros_like()).detach())
            }
        }
        let v = self.v.as_ref()?;
        Some(model.clone().map(&mut Fill(v)))
    }

    /// The direction a module from [`StormDirection::to_module`] holds, keyed by its
    /// parameters' ids (a copy of the model loaded from a checkpoint has the model's), on the
    /// inner backend as gradients are (an optimizer step on tracked values would panic).
    pub fn from_module<M: Module>(module: &M) -> Self {
        struct Take(GradientsParams);
        impl ModuleVisitor for Take {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.0.register(param.id, param.val().inner());
            }
        }
        let mut take = Take(GradientsParams::new());
        module.visit(&mut take);
        StormDirection { v: Some(take.0) }
    }

    /// A copy of `v` as gradients for an optimizer step (empty before the first update).
    pub fn gradients<M: Module>(&self, module: &M) -> GradientsParams {
        struct Copy<'a> {
            v: &'a GradientsParams,
            out: GradientsParams,
        }
        impl ModuleVisitor for Copy<'_> {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                if let Some(t) = self.v.get::<D>(param.id) {
                    self.out.register(param.id, t);
                }
            }
        }
        let mut visitor = Copy {
            v: match &self.v {
                Some(v) => v,
                None => return GradientsParams::new(),
            },
            out: GradientsParams::new(),
        };
        module.visit(&mut visitor);
        visitor.out
    }
}

#[cfg(test)]
mod tests {
    use burn::nn::{Linear, LinearConfig};
    use burn::optim::GradientsParams;
    use burn::tensor::{Device, Tensor, TensorData};

    use super::*;
    use crate::device::backend::{BackendKind, autodiff_device};

    fn grads(layer: &Linear, x: [f32; 2]) -> GradientsParams {
        let input =
            Tensor::<2>::from_data(TensorData::new(x.to_vec(), [1, 2]), &layer.weight.device());
        let loss = layer.forward(input).sum();
        GradientsParams::from_grads(loss.backward(), layer)
    }

    fn weight(g: &GradientsParams, layer: &Linear) -> Vec<f32> {
        g.get::<2>(layer.weight.id)
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap()
    }

    #[test]
    fn the_direction_starts_at_the_gradient_then_follows_the_correction() {
        let device: Device = autodiff_device(BackendKind::Flex).unwrap();
        let layer = LinearConfig::new(2, 3).init(&device);
        // Burn's weight is [inputs, outputs]: d(sum(x W + b))/dW[j, o] = x_j, exactly.
        let (g1, g2, g3) = ([1.0, 2.0], [0.5, -1.0], [3.0, 0.25]);
        let mut v = StormDirection::new();
        assert!(!v.is_started() && v.gradients(&layer).is_empty());
        v.update(&layer, grads(&layer, g1), None, 0.3);
        assert_eq!(
            weight(&v.gradients(&layer), &layer),
            [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
        );
        // v = new + (1 - rho)(v - old) with new = g2, old = g3, rho = 0.25.
        v.update(&layer, grads(&layer, g2), Some(grads(&layer, g3)), 0.25);
        let want: Vec<f32> = (0..2)
            .flat_map(|j| [g2[j] + 0.75 * (g1[j] - g3[j]); 3])
            .collect();
        let got = weight(&v.gradients(&layer), &layer);
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "{got:?} vs {want:?}");
        }
        // The bias: gradient 1 at every point, so v = 1 + 0.75 (1 - 1) = 1.
        let bias = v
            .gradients(&layer)
            .get::<1>(layer.bias.as_ref().unwrap().id)
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        assert_eq!(bias, [1.0, 1.0, 1.0]);
        // Through a model-shaped module (as a checkpoint keeps it) and back: the same values
        // under the model's parameter ids.
        let module = v.to_module(&layer).unwrap();
        let back = StormDirection::from_module(&module);
        assert_eq!(
            weight(&back.gradients(&layer), &layer),
            weight(&v.gradients(&layer), &layer)
        );
        assert!(StormDirection::new().to_module(&layer).is_none());
    }
}
