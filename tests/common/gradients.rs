//! The test crates' one way to read a module's parameter gradients and compare two sets of
//! them (`tests/models.rs`, and `models/tests/kernels.rs` by `#[path]`).

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;

/// One parameter's gradient: its shape and its values, flattened.
pub type Gradient = (Vec<usize>, Vec<f32>);

/// Every float parameter's gradient in the module's visiting order (batch norm's running
/// statistics have none and are skipped).
pub fn parameter_gradients<M: Module>(model: &M, grads: &GradientsParams) -> Vec<Gradient> {
    struct Collect<'a>(&'a GradientsParams, Vec<Gradient>);
    impl ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.0.get::<D>(param.id) {
                let dims = g.dims().to_vec();
                let v = g.into_data().convert::<f32>().try_to_vec::<f32>().unwrap();
                self.1.push((dims, v));
            }
        }
    }
    let mut c = Collect(grads, Vec::new());
    model.visit(&mut c);
    c.1
}

/// `||a - b|| / ||b||` over all the gradients together, tensor by tensor of the same shape
/// (a shape that differs panics, naming the tensor).
pub fn relative_l2(a: &[Gradient], b: &[Gradient]) -> f64 {
    assert_eq!(a.len(), b.len(), "gradient tensors");
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (k, ((dims, x), (want_dims, y))) in a.iter().zip(b).enumerate() {
        assert_eq!(dims, want_dims, "gradient {k}");
        for (u, v) in x.iter().zip(y) {
            num += (f64::from(*u) - f64::from(*v)).powi(2);
            den += f64::from(*v).powi(2);
        }
    }
    (num / den.max(1e-300)).sqrt()
}
