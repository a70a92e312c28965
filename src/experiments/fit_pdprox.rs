//! `rankrisk fit-linear --solver pdprox-dual|pdprox-primal`: the loss, regularizer and Pdprox
//! options of `fit-linear`, and the Pdprox fit itself (papers/pdprox-primal-dual-nonsmooth.txt).

use crate::experiments::ExperimentError;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use clap::Args;
use rankrisk_datasets::Tabular;

use crate::math::loss::Loss;
use crate::math::regularizer::Regularizer;
use crate::math::spec::{SpecError, SpecKind};
use crate::math::weights::Weights;
use crate::pdprox::{
    Algorithm, DualLoss, LinearProblem, PdproxConfig, PdproxResult, Penalty, StepBound, solve,
};

/// `--loss`: a loss of the rank-based solvers or one with a bilinear dual for Pdprox (`hinge`
/// is both).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossSpec {
    /// logistic, hinge, exponential, sqhinge, smooth-hinge.
    Rank(Loss),
    /// absolute, eps-insensitive, generalized-hinge (Pdprox only).
    Dual(DualLoss),
}

impl FromStr for LossSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.parse::<Loss>() {
            Ok(loss) => Ok(LossSpec::Rank(loss)),
            Err(SpecError::Unknown { name, .. }) => match s.parse::<DualLoss>() {
                Ok(loss) => Ok(LossSpec::Dual(loss)),
                Err(SpecError::Unknown { .. }) => Err(SpecError::Unknown {
                    kind: SpecKind::Loss,
                    name,
                    expected: "logistic, hinge, exponential, sqhinge, smooth-hinge, and for the \
                               pdprox solvers absolute, eps-insensitive, generalized-hinge",
                }),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }
}

impl fmt::Display for LossSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LossSpec::Rank(l) => l.fmt(f),
            LossSpec::Dual(l) => l.fmt(f),
        }
    }
}

impl LossSpec {
    /// The loss of the rank-based solvers.
    ///
    /// # Errors
    /// A message naming the solvers that take a Pdprox-only loss.
    pub fn rank(&self, solver: &str) -> Result<Loss, ExperimentError> {
        match *self {
            LossSpec::Rank(l) => Ok(l),
            LossSpec::Dual(l) => Err(ExperimentError::Setting(format!(
                "the {l} loss is solved by --solver pdprox-dual or pdprox-primal, not {solver}"
            ))),
        }
    }

    /// The loss with its bilinear dual.
    ///
    /// # Errors
    /// A message saying why a smooth loss is refused.
    pub fn dual(&self) -> Result<DualLoss, ExperimentError> {
        match *self {
            LossSpec::Dual(l) => Ok(l),
            LossSpec::Rank(Loss::Hinge) => Ok(DualLoss::Hinge),
            LossSpec::Rank(l) => Err(ExperimentError::Setting(format!(
                "the {l} loss has no bilinear dual (6) with a bounded domain that Pdprox needs \
                 (the pdprox solvers take hinge, generalized-hinge, absolute, eps-insensitive); \
                 use --solver admm"
            ))),
        }
    }
}

/// `--reg`: an element-wise regularizer, or the group lasso `group:MU` (Pdprox only, groups
/// from `--groups`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegSpec {
    /// none, l1, l2, enet, mcp, scad.
    Elementwise(Regularizer),
    /// `mu sum_g sqrt(d_g) ||w_g||_2`.
    Group {
        /// Weight.
        mu: f64,
    },
}

impl FromStr for RegSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        match t.split_once(':') {
            Some(("group" | "group-lasso", mu)) => {
                let mu: f64 = mu.trim().parse().map_err(|_| SpecError::Syntax {
                    kind: SpecKind::Regularizer,
                    family: "group".into(),
                    problem: format!("'{mu}' is not a number (group:MU)"),
                })?;
                crate::math::spec::require(
                    mu.is_finite() && mu >= 0.0,
                    SpecKind::Regularizer,
                    "group",
                    "MU >= 0",
                    || mu.to_string(),
                )?;
                Ok(RegSpec::Group { mu })
            }
            _ => s.parse().map(RegSpec::Elementwise),
        }
    }
}

impl fmt::Display for RegSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegSpec::Elementwise(r) => r.fmt(f),
            RegSpec::Group { mu } => write!(f, "group:{mu}"),
        }
    }
}

/// The options of `fit-linear` that only the pdprox solvers read.
#[derive(Debug, Clone, Args)]
pub struct PdproxArgs {
    /// Groups of the group lasso (`--reg group:MU`): `size=K` (consecutive groups of K
    /// features) or a file with one group label per feature (whitespace or commas).
    #[arg(long)]
    pub groups: Option<String>,
    /// Budget `||alpha||_1 <= M` on the hinge duals (eq. 16, Dekel and Singer's budget SVM;
    /// erm weights).
    #[arg(long)]
    pub budget: Option<f64>,
    /// An unregularized bias (pdprox solvers; `--intercept` instead appends a regularized
    /// constant feature).
    #[arg(long)]
    pub bias: bool,
    /// Lemma 3's constant c (step 1/sqrt(2c)): exact (largest eigenvalue of X^T X) or row-norm
    /// (the paper's bound, c = 1/n for unit rows).
    #[arg(long, default_value = "exact")]
    pub step_bound: StepBoundArg,
    /// Iterations between two duality-gap checks (each costs four passes).
    #[arg(long, default_value_t = 10)]
    pub check_every: usize,
}

/// The command line's defaults (a derived `Default` gave `check_every = 0`, which every
/// solver refuses: the rank-based reproduction then printed a table of failed cells).
impl Default for PdproxArgs {
    fn default() -> Self {
        PdproxArgs {
            groups: None,
            budget: None,
            bias: false,
            step_bound: StepBoundArg::default(),
            check_every: 10,
        }
    }
}

/// `--step-bound`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StepBoundArg {
    /// The largest eigenvalue of X^T X.
    #[default]
    Exact,
    /// The paper's bound from the largest row norm.
    RowNorm,
}

/// Group labels for `d` features from `--groups`.
fn read_groups(spec: &str, d: usize) -> Result<Vec<usize>, ExperimentError> {
    let labels: Vec<String> = if let Some(k) = spec.strip_prefix("size=") {
        let k: usize = k.parse().ok().filter(|&k| k > 0).ok_or_else(|| {
            ExperimentError::Setting(format!(
                "--groups size=K needs a positive integer K, got '{k}'"
            ))
        })?;
        (0..d).map(|j| (j / k).to_string()).collect()
    } else {
        let path = Path::new(spec);
        let text = std::fs::read_to_string(path).map_err(|e| {
            ExperimentError::Setting(format!(
                "--groups: cannot read {} ({e}); give size=K or a file with one group label \
                 per feature",
                path.display()
            ))
        })?;
        text.split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    if labels.len() != d {
        return Err(ExperimentError::Setting(format!(
            "--groups gives {} group labels for {d} features (with --intercept the constant \
             feature counts)",
            labels.len()
        )));
    }
    let mut seen: Vec<&str> = Vec::new();
    Ok(labels
        .iter()
        .map(|l| {
            seen.iter().position(|s| s == l).unwrap_or_else(|| {
                seen.push(l);
                seen.len() - 1
            })
        })
        .collect())
}

/// Fit by Pdprox-dual or Pdprox-primal.
///
/// # Errors
/// A message for the user: a loss, weights or regularizer that Pdprox cannot take (and why),
/// bad groups, bad settings.
#[allow(clippy::too_many_arguments)]
pub fn fit(
    train: &Tabular,
    solver: &str,
    loss: LossSpec,
    objective: &Weights,
    reg: RegSpec,
    opts: &PdproxArgs,
    max_iter: usize,
    tol: f64,
) -> Result<PdproxResult, ExperimentError> {
    let algorithm = match solver {
        "pdprox-dual" => Algorithm::Dual,
        _ => Algorithm::Primal,
    };
    let loss = loss.dual()?;
    let penalty = match reg {
        RegSpec::Elementwise(r) => {
            if opts.groups.is_some() {
                return Err(ExperimentError::Setting(
                    "--groups is for --reg group:MU".into(),
                ));
            }
            Penalty::elementwise(r).map_err(ExperimentError::solve)?
        }
        RegSpec::Group { mu } => {
            let spec = opts.groups.as_deref().ok_or_else(|| {
                ExperimentError::Setting(
                    "--reg group:MU needs --groups size=K or --groups FILE".into(),
                )
            })?;
            Penalty::GroupLasso {
                mu,
                group: read_groups(spec, train.d)?,
            }
        }
    };
    let mut problem = LinearProblem::new(
        &train.x,
        &train.y,
        train.d,
        loss,
        objective,
        opts.budget,
        opts.bias,
    )
    .map_err(ExperimentError::solve)?;
    let cfg = PdproxConfig {
        algorithm,
        step_bound: match opts.step_bound {
            StepBoundArg::Exact => StepBound::Exact,
            StepBoundArg::RowNorm => StepBound::RowNorm,
        },
        tol,
        max_iter,
        check_every: opts.check_every,
    };
    solve(&mut problem, &penalty, &cfg).map_err(ExperimentError::solve)
}
