//! The objectives' Burn faces: each objective's CPU core is the core crate's
//! ([`rankrisk_core::objective`]); here is what puts it in a Burn program.
//!
//! - [`objective`]: [`objective::BurnObjective`] (`forward` on device tensors, records) for
//!   every core objective, and the core's [`objective::Objective`] trait and ERM re-exported;
//! - [`state_record`]: an objective's state as a Burn record, with [`provenance`]'s settings
//!   and training-label fingerprint, refused by name when they differ;
//! - [`params`]: the device terms (squared norm, proximal distance to a snapshot) of AUC-M and
//!   the deep ADMM over any module's parameters;
//! - [`deep_sbcd`] and [`sbcd_model`]: AGD-SBCD for deep models (the duals on the CPU, update
//!   (14) parameter-wise on the device);
//! - [`storm`]: ASGDA's STORM direction for a module's parameters (PAUCI, UPAUCI).

pub mod deep_sbcd;
pub mod objective;
pub mod params;
pub mod provenance;
pub mod sbcd_model;
pub mod state_record;
pub mod storm;
