//! Training any Burn module with rankrisk's objectives.
//!
//! The objectives keep per-sample state on the CPU and see only scores: a user's loop reads
//!
//! ```text
//! forward -> scores_to_cpu (one read per batch) -> objective.batch_gradient -> surrogate
//!         -> backward -> optimizer step
//! ```
//!
//! - [`objective`]: the [`Objective`] trait and the plain rank-free ERM objective;
//! - [`rank_admm`]: Algorithm 1 of the rank-based paper for deep models (z, lambda per sample
//!   on the CPU, the w-step by mini-batch steps of a Burn optimizer);
//! - [`sbcd`]: AGD-SBCD of the pAUC paper for deep models (per-positive duals on the CPU,
//!   the closed-form v update parameter-wise on the device);
//! - [`baselines`]: the deep baselines of the pAUC paper (CE, AUC-M with PESG, mini-batch
//!   pAUC);
//! - [`image`]: a complete run on a binary image task (any method, evaluation, metrics files,
//!   plots, checkpoints, resume);
//! - [`tasks`]: the long-tailed binary image tasks (CIFAR-LT, Tiny-ImageNet, Fashion-MNIST,
//!   MNIST) with ResNet-20 and the CheXpert tasks with DenseNet121;
//! - [`tabular`]: the linear solvers on the vendored tabular sets, scored on a test split;
//! - [`report`]: one results row per trained model and the markdown table of them;
//! - [`learner`]: the objectives inside burn-train's Learner (`TrainStep`/`InferenceStep`);
//! - [`checkpoint`]: model, anchor, optimizer and CPU state on disk, for resuming without loss;
//! - [`params`]: parameter-wise terms on the device (squared norm, proximal distance to a
//!   snapshot) for any module.

pub mod baselines;
pub mod checkpoint;
pub mod image;
pub mod learner;
pub mod objective;
pub mod params;
pub mod rank_admm;
pub mod report;
pub mod sbcd;
pub mod tabular;
pub mod tasks;

pub use baselines::{AucM, MiniBatchPauc};
pub use objective::{BatchGradient, Erm, Objective, TrainError};
pub use rank_admm::{DeepAdmm, DeepAdmmConfig};
pub use sbcd::{BurnModel, DeepSbcd};
