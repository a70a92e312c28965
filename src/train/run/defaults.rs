//! Defaults of the settings that later versions added (a saved config without them reads
//! back with these).
//!
//! The objectives' settings take their objective configs' defaults (LibAUC's), so that those
//! are written once.

use crate::train::dro_pauc::{SopaConfig, SopaSConfig, SotaSConfig, StacoConfig};
use crate::train::instance_pauc::{AsgdaConfig, PauciConfig, UpauciConfig};

/// The two-way region of issue 42's tables: TPR >= 0.7.
pub(crate) fn tpr_min() -> f64 {
    0.7
}
/// The two-way region of issue 42's tables: FPR <= 0.3.
pub(crate) fn fpr_max() -> f64 {
    0.3
}
/// LibAUC's `tpAUC_CVaR_loss` `threshold` ([`StacoConfig`]'s).
pub(crate) fn staco_margin() -> f64 {
    StacoConfig::new().margin
}
/// LibAUC's `tpAUC_CVaR_loss` `alpha` ([`StacoConfig`]'s).
pub(crate) fn staco_alpha() -> f64 {
    StacoConfig::new().alpha
}
/// LibAUC's `tpAUC_CVaR_loss` `beta_0` ([`StacoConfig`]'s).
pub(crate) fn staco_beta_0() -> f64 {
    StacoConfig::new().beta_0
}
/// LibAUC's `tpAUC_CVaR_loss` `beta_1` ([`StacoConfig`]'s).
pub(crate) fn staco_beta_1() -> f64 {
    StacoConfig::new().beta_1
}
/// The released PAUCI code's `kappa` ([`PauciConfig`]'s).
pub(crate) fn kappa() -> f64 {
    PauciConfig::new().kappa
}
/// [`AsgdaConfig`]'s defaults (the released PAUCI code's).
pub(crate) fn asgda() -> AsgdaConfig {
    AsgdaConfig::new()
}
pub(crate) fn asgda_k() -> f64 {
    asgda().k
}
pub(crate) fn asgda_m() -> f64 {
    asgda().m
}
pub(crate) fn asgda_nu() -> f64 {
    asgda().nu
}
pub(crate) fn asgda_lambda() -> f64 {
    asgda().lambda
}
pub(crate) fn asgda_iota() -> f64 {
    asgda().iota_1
}
/// [`PauciConfig`]'s scalar step.
pub(crate) fn scalar_lr() -> f64 {
    PauciConfig::new().lr
}
/// [`UpauciConfig`]'s weight step.
pub(crate) fn weights_lr() -> f64 {
    UpauciConfig::new().lr_weights
}

/// LibAUC's margin of the squared hinge ([`SopaConfig`]'s).
pub(crate) fn margin() -> f64 {
    SopaConfig::new(1.0).margin
}
/// LibAUC's `pAUC_CVaR_Loss` eta ([`SopaConfig`]'s).
pub(crate) fn sopa_eta() -> f64 {
    SopaConfig::new(1.0).eta
}
/// LibAUC's `Lambda` ([`SopaSConfig`]'s).
pub(crate) fn dro_lambda() -> f64 {
    SopaSConfig::new().lambda
}
/// LibAUC's `tau` ([`SotaSConfig`]'s).
pub(crate) fn dro_tau() -> f64 {
    SotaSConfig::new().tau
}
/// LibAUC's `gamma` (and `gammas`; [`SopaSConfig`]'s).
pub(crate) fn dro_gamma() -> f64 {
    SopaSConfig::new().gamma
}
/// pROC's default number of bootstrap resamples.
pub(crate) fn bootstrap() -> usize {
    2000
}
/// A saved config without `grad_clip`: no clamping, as those runs trained.
pub(crate) fn no_clip() -> Option<f64> {
    Some(0.0)
}
/// A saved `grad_clip` of none: no clamping (0), as those runs trained.
pub(crate) fn clip_or_off<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use serde::Deserialize;
    Ok(Some(Option::<f64>::deserialize(d)?.unwrap_or(0.0)))
}
