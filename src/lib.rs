#![warn(missing_docs)]
//! rankrisk: rank-based losses and partial-AUC objectives for classifiers built with Burn.
//!
//! The objectives run on the CPU over per-sample state; each is built from its Burn config
//! (`SopaConfig::new(beta).with_eta(0.1).init(&labels)?`) and used in a training loop through
//! one [`forward`](train::BurnObjective::forward) that returns the loss tensor to call `backward`
//! on, its parameter gradients landing on the device the model lives on ([`backend`] picks it
//! at run time). Its state is a Burn record ([`into_record`](train::BurnObjective::into_record),
//! [`try_load_record`](train::BurnObjective::try_load_record)) that travels beside the model's.
//! `use rankrisk::prelude::*` brings the [`Objective`](train::Objective) trait (the CPU step,
//! the core crate's) and [`BurnObjective`](train::BurnObjective) (whose methods these are), the
//! configs, the Learner's wrapper and the backend choice into scope.
//!
//! SOPA's one-way pAUC over FPR `[0, 0.5]` training a linear scorer in a plain Burn loop (the
//! same loop takes any [`train::Objective`] and any Burn model implementing
//! `rankrisk_models::Scorer`):
//!
//! ```
//! use burn::optim::{AdamConfig, GradientsParams, Optimizer};
//! use burn::tensor::{Int, Tensor, TensorData};
//! use rankrisk::prelude::*;
//! use rankrisk_models::{LinearScorerConfig, Scorer};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let device = autodiff_device(BackendKind::Flex)?;
//! // Eight samples with two features; the positives lie along the first one.
//! let x = [2.0f32, 0.5, 1.5, -1.0, 1.0, 0.3, 2.5, 0.8, -1.0, 0.2, -0.5, 1.0, -2.0, -0.4, 0.1, 0.9];
//! let labels = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
//! let inputs = || Tensor::<4>::from_data(TensorData::new(x.to_vec(), [8, 1, 1, 2]), &device);
//! let targets = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 1, 1, 1, 0, 0, 0, 0], [8]), &device);
//! let ids = Tensor::<1, Int>::arange(0..8, &device);
//! let mut model = LinearScorerConfig::new(2).init(&device);
//! let mut optim = AdamConfig::new().init();
//! let mut sopa = SopaConfig::new(0.5).init(&labels)?; // LibAUC's margin 1.0 and eta 0.1
//! for _ in 0..100 {
//!     let loss = sopa.forward(model.score(inputs()), targets.clone(), ids.clone())?;
//!     let grads = GradientsParams::from_grads(loss.backward(), &model);
//!     model = optim.step(0.05, model, grads);
//! }
//! let scores = scores_to_cpu(model.score(inputs()))?;
//! let signs: Vec<f64> = labels.iter().map(|&y| 2.0 * y - 1.0).collect();
//! assert_eq!(rankrisk::metrics::auc::auc(&scores, &signs)?, 1.0);
//! # Ok(())
//! # }
//! ```
//!
//! Layers, each importing only from the ones above it in this list (docs/ARCHITECTURE.md):
//!
//! 1. the crate `rankrisk_core`, with no Burn in its tree, re-exported here under the same
//!    names: [`math`] (core math: [`vector`], [`order`], [`spec`], [`loss`], [`weights`],
//!    [`regularizer`], [`pava`]), [`metrics`], and the solvers [`admm`] (rank-based, with its
//!    baselines), [`pauc`] (partial AUC, with its baselines), [`pdprox`] (the primal-dual prox
//!    method for non-smooth convex problems);
//! 2. [`device`](mod@device): [`backend`], [`bridge`], [`remote`]; [`plot`] (the metrics'
//!    pictures);
//! 3. [`train`]: the objectives for Burn models and the image run driver;
//! 4. [`tasks`]: data sets with their models, ready to run;
//! 5. [`experiments`]: runs as the command line and the examples describe them (settings,
//!    config files, launches, linear fits); the binary's `cli` module adds the subcommands.

pub mod device;
pub mod experiments;
pub mod plot;
pub mod tasks;
pub mod train;

pub use rankrisk_core::{admm, math, metrics, pauc, pdprox};

// The paths users import from before the layers had folders.
pub use device::{backend, bridge, remote};
pub use math::{loss, order, pava, regularizer, spec, vector, weights};

pub use backend::{BackendKind, autodiff_device, device};
pub use bridge::{scores_to_cpu, surrogate};

/// What a Burn program that trains with rankrisk's objectives imports,
/// `use rankrisk::prelude::*;`: the [`Objective`](train::Objective) trait (`batch_gradient`,
/// `evaluate`, `state`) and [`BurnObjective`](train::BurnObjective) (`forward`, `into_record`,
/// `try_load_record` and `load_record`: they need it in scope), every objective's config and
/// type, the Learner's wrapper and ranking metrics, and
/// the backend choice.
pub mod prelude {
    pub use crate::backend::{BackendKind, autodiff_device, device};
    pub use crate::bridge::scores_to_cpu;
    pub use crate::pauc::agd::AgdSbcdConfig;
    pub use crate::train::deep_sbcd::{DeepSbcd, DeepSbcdInit};
    pub use crate::train::learner::{LearnerBatch, ObjectiveModel, RankingMetric, ScoreOutput};
    pub use crate::train::{
        AucM, AucMConfig, BurnObjective, DeepAdmm, DeepAdmmConfig, DeviceTerms, Erm, ErmConfig,
        MiniBatchPauc, MiniBatchPaucConfig, Objective, Pauci, PauciConfig, Sopa, SopaConfig, SopaS,
        SopaSConfig, SotaS, SotaSConfig, Staco, StacoConfig, TrainError, Upauci, UpauciConfig,
    };
}
