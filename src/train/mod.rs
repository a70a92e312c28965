//! Training any Burn module with rankrisk's objectives.
//!
//! The objectives keep per-sample state on the CPU and see only scores: a user's loop reads
//!
//! ```text
//! forward -> scores_to_cpu (one read per batch) -> objective.batch_gradient -> surrogate
//!         -> backward -> optimizer step
//! ```
//!
//! The folders say what they hold: [`objectives`] the objectives' Burn faces (the trait
//! [`BurnObjective`] over the core crate's [`Objective`], records, provenance, the device terms,
//! deep AGD-SBCD's model side, ASGDA's direction), [`run`] the image run driver, [`learner`]
//! burn-train's Learner; [`parallel`] and [`checkpoint`] serve the loops. The paths below are
//! re-exports, so `train::objective`, `train::deep_sbcd` and the rest keep working.
//!
//! - [`objective`]: the [`Objective`] trait and the plain rank-free ERM objective;
//! - [`deep_admm`]: Algorithm 1 of the rank-based paper for deep models (z, lambda per sample
//!   on the CPU, the w-step by mini-batch steps of a Burn optimizer);
//! - [`deep_sbcd`]: AGD-SBCD of the pAUC paper for deep models (per-positive duals on the CPU,
//!   the closed-form v update parameter-wise on the device);
//! - [`aucm`], [`mb_pauc`]: the deep baselines of the pAUC paper (AUC-M with PESG, mini-batch
//!   pAUC; CE is [`Erm`] with the logistic loss);
//! - [`dro_pauc`]: LibAUC's partial-AUC family by DRO (Zhu et al. 2022): SOPA and SOPA-s for
//!   the one-way pAUC over FPR [0, beta], SOTA-s for the two-way pAUC, and LibAUC 2.0's
//!   exact two-way STACO;
//! - [`instance_pauc`]: the instance-wise one- and two-way pAUC by learned thresholds, PAUCI
//!   (softplus selection) and UPAUCI (one selection weight per instance), with their
//!   scalars' side of the paper's ASGDA solver; [`storm`]: ASGDA's direction for a module's
//!   parameters;
//! - [`run`]: a complete run on a binary image task (any method, evaluation, metrics files,
//!   plots, checkpoints, resume);
//! - [`learner`]: the objectives inside burn-train's Learner (`TrainStep`/`InferenceStep`);
//! - [`recipe`]: the training recipe (optimizer, weight decay, momentum, learning-rate
//!   schedule, warm-up, evaluation period) that the run driver, the Learner and a user's loop
//!   build Burn's optimizer and scheduler from;
//! - [`parallel`]: data parallelism over several devices with one CPU state (the objective
//!   sees the whole batch's scores once);
//! - [`provenance`]: the settings and the training labels' fingerprint an objective's record
//!   carries beside its state;
//! - [`sbcd_model`]: a Burn module as AGD-SBCD's model (the device side of [`deep_sbcd`]);
//! - [`checkpoint`]: model, anchor, optimizer and CPU state on disk, for resuming without loss;
//! - [`params`]: parameter-wise terms on the device (squared norm, proximal distance to a
//!   snapshot) for any module.

/// AUC-M with PESG's scalars: the core crate's, re-exported (its device terms:
/// [`params::DeviceTerms`]).
pub use rankrisk_core::objective::aucm;
pub mod checkpoint;
/// The deep rank-based ADMM's CPU side: the core crate's, re-exported (its device terms:
/// [`params::DeviceTerms`]).
pub use rankrisk_core::objective::deep_admm;
pub mod error;
/// SOPA, SOPA-s, SOTA-s and STACO: the core crate's, re-exported.
pub use rankrisk_core::objective::dro_pauc;
/// PAUCI, UPAUCI and ASGDA's scalar side: the core crate's, re-exported.
pub use rankrisk_core::objective::instance_pauc;
pub mod learner;
/// Mini-batch pAUC: the core crate's, re-exported.
pub use rankrisk_core::objective::mb_pauc;
pub mod objectives;
pub mod parallel;
pub mod recipe;
pub mod run;

pub use objectives::{deep_sbcd, objective, params, provenance, sbcd_model, state_record, storm};

pub use aucm::{AucM, AucMConfig};
pub use deep_admm::{DeepAdmm, DeepAdmmConfig};
pub use deep_sbcd::{BurnModel, DeepSbcd};
pub use dro_pauc::{Sopa, SopaConfig, SopaS, SopaSConfig, SotaS, SotaSConfig, Staco, StacoConfig};
pub use instance_pauc::{
    AsgdaConfig, InstanceWise, MinMaxGradient, Pauci, PauciConfig, Upauci, UpauciConfig,
};
pub use mb_pauc::{MiniBatchPauc, MiniBatchPaucConfig};
pub use objective::{BatchGradient, BurnObjective, Erm, ErmConfig, Objective, TrainError};
pub use params::DeviceTerms;
pub use provenance::{LabelPrint, Provenance};
pub use storm::StormDirection;
