//! AGD-SBCD (Algorithms 1-2 of papers/partial-auc-fpr-range-agd-sbcd.txt) for the linear
//! scorer `s(x) = w^T x`: the model side ([`LinearModel`], an [`SbcdModel`] over
//! [`PairData`]) and the run to a budget of outer iterations or passes ([`agd_sbcd_linear`]).

use serde::{Deserialize, Serialize};

use crate::math::vector::dot;
use crate::pauc::agd::{AgdSbcd, AgdSbcdConfig, SbcdModel, schedule_overflow, schedule_steps};
use crate::pauc::error::PaucError;
use crate::pauc::sbcd::{AgdRecord, PairData, prox_update};

/// The linear scorer `s(x) = w^T x` over [`PairData`] as an [`SbcdModel`]: training-set ids
/// are the positives `0..N+` followed by the negatives.
#[derive(Debug, Clone)]
pub struct LinearModel<'a> {
    data: &'a PairData,
    last: Vec<usize>,
}

impl<'a> LinearModel<'a> {
    /// The model over `data`.
    pub fn new(data: &'a PairData) -> Self {
        LinearModel {
            data,
            last: Vec::new(),
        }
    }

    /// `positive[id]` in this model's id order.
    pub fn labels(&self) -> Vec<bool> {
        let (p, n) = (self.data.n_pos(), self.data.n_neg());
        std::iter::repeat_n(true, p)
            .chain(std::iter::repeat_n(false, n))
            .collect()
    }

    /// Scores of every sample at `w`, in id order.
    pub fn all_scores(&self, w: &[f64]) -> Vec<f64> {
        let (sp, sn) = self.data.scores(w);
        sp.into_iter().chain(sn).collect()
    }

    fn split(&self, ids: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let n_pos = self.data.n_pos();
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for &id in ids {
            if id < n_pos {
                pos.push(id)
            } else {
                neg.push(id - n_pos)
            }
        }
        (pos, neg)
    }
}

impl SbcdModel for LinearModel<'_> {
    type Point = Vec<f64>;
    type Error = PaucError;

    fn scores(&mut self, v: &Vec<f64>, ids: &[usize]) -> Result<Vec<f64>, PaucError> {
        let n_pos = self.data.n_pos();
        let d = self.data.d;
        self.last = ids.to_vec();
        Ok(ids
            .iter()
            .map(|&id| {
                let row = if id < n_pos {
                    &self.data.pos[id * d..(id + 1) * d]
                } else {
                    &self.data.neg[(id - n_pos) * d..(id - n_pos + 1) * d]
                };
                dot(row, v)
            })
            .collect())
    }

    fn prox_step(
        &mut self,
        mut v: Vec<f64>,
        w: &Vec<f64>,
        coef: &[f64],
        eta: f64,
        mu: f64,
    ) -> Result<Vec<f64>, PaucError> {
        let n_pos = self.data.n_pos();
        let (pos, neg) = self.split(&self.last);
        let (mut cp, mut cn) = (Vec::new(), Vec::new());
        for (&id, &c) in self.last.iter().zip(coef) {
            if id < n_pos { cp.push(c) } else { cn.push(c) }
        }
        let mut g = vec![0.0; self.data.d];
        self.data.add_rows(&mut g, &pos, &cp, &neg, &cn);
        prox_update(&mut v, w, &g, eta, mu);
        Ok(v)
    }

    fn combine(&self, terms: &[(f64, &Vec<f64>)]) -> Vec<f64> {
        let mut out = vec![0.0; self.data.d];
        for (a, p) in terms {
            for (o, x) in out.iter_mut().zip(p.iter()) {
                *o += a * x;
            }
        }
        out
    }
}

/// How long a linear AGD-SBCD run goes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Budget {
    /// This many outer iterations (Algorithm 2's K).
    Outer(usize),
    /// Sample visits / (N+ + N-) up to this many epochs; the last outer iteration is cut to
    /// fit.
    Epochs(f64),
}

impl Budget {
    /// Check the budget: at least one outer iteration, or a positive finite number of passes.
    ///
    /// # Errors
    /// [`PaucError::Setting`] (`epochs` for outer iterations, `budget_epochs` for passes).
    pub fn validate(&self) -> Result<(), PaucError> {
        match *self {
            Budget::Outer(0) => Err(PaucError::Setting {
                name: "epochs",
                message: "at least 1 outer iteration, got 0".into(),
            }),
            Budget::Epochs(e) if !(e.is_finite() && e > 0.0) => Err(PaucError::Setting {
                name: "budget_epochs",
                message: format!("must be a positive finite number of passes, got {e}"),
            }),
            _ => Ok(()),
        }
    }

    /// The sample visits a budget of passes allows over `n_total` samples,
    /// `floor(e (N+ + N-))`; unbounded (infinite) for a budget of outer iterations.
    ///
    /// # Errors
    /// [`PaucError::Setting`] (`budget_epochs`) when the visits exceed 2^53, where counting
    /// them in `f64` stops being exact (a budget such as `1e30` would otherwise saturate the
    /// step count and never end).
    pub fn sample_visits(&self, n_total: usize) -> Result<f64, PaucError> {
        self.validate()?;
        match *self {
            Budget::Outer(_) => Ok(f64::INFINITY),
            Budget::Epochs(e) => {
                let visits = (e * n_total as f64).floor();
                if visits > MAX_SAMPLE_VISITS {
                    return Err(PaucError::Setting {
                        name: "budget_epochs",
                        message: format!(
                            "{e} passes over {n_total} samples are {visits:e} sample visits, \
                             more than the 2^53 that can be counted exactly"
                        ),
                    });
                }
                Ok(visits)
            }
        }
    }
}

/// The most sample visits a budget of passes may allow: 2^53, the last integer an `f64`
/// counts exactly.
pub const MAX_SAMPLE_VISITS: f64 = 9_007_199_254_740_992.0;

/// [`PaucError::Setting`] for a budget of `passes` passes that allows `steps` steps of
/// `per_step` samples, fewer than the `needed` of one iteration.
pub(crate) fn budget_too_small(passes: f64, steps: f64, needed: usize) -> PaucError {
    PaucError::Setting {
        name: "budget_epochs",
        message: format!(
            "{passes} passes allow {steps} steps, fewer than the {needed} of one outer \
             iteration: nothing would run (raise it)"
        ),
    }
}

/// Algorithm 2 (AGD) with SBCD inner solves for a linear model from `w0`; returns the final `w`
/// and the history (one record per outer iteration, with the epochs used so far). (The
/// theory outputs `v_bar_n` at a random iteration; the final iterate is what the history
/// describes.)
///
/// # Errors
/// [`PaucError`] for bad settings, a budget that allows no outer iteration, a degenerate
/// problem or a diverged iterate.
pub fn agd_sbcd_linear(
    data: &PairData,
    w0: &[f64],
    cfg: &AgdSbcdConfig,
    budget: Budget,
) -> Result<(Vec<f64>, Vec<AgdRecord>), PaucError> {
    let visits = budget.sample_visits(data.n_pos() + data.n_neg())?;
    let (n_pos, n_neg) = (data.n_pos(), data.n_neg());
    let cfg = AgdSbcdConfig {
        i: cfg.i.min(n_pos),
        j: cfg.j.min(n_neg),
        ..*cfg
    };
    let mut model = LinearModel::new(data);
    let mut solver = AgdSbcd::new(cfg, &model.labels())?;
    let mut w = w0.to_vec();
    solver.init_duals(&model.all_scores(&w))?;
    let per_step = solver.samples_per_step() as f64;
    let n_total = (n_pos + n_neg) as f64;
    let mut steps_left = match budget {
        Budget::Outer(k) => {
            if schedule_steps(cfg.t_scale, k, solver.calls()).is_none() {
                return Err(schedule_overflow(cfg.t_scale, k));
            }
            Some(usize::MAX)
        }
        Budget::Epochs(e) => {
            let steps = (visits / per_step).floor();
            if steps < solver.calls() as f64 {
                return Err(budget_too_small(e, steps, solver.calls()));
            }
            Some(steps as usize)
        }
    };
    let max_outer = match budget {
        Budget::Outer(k) => k,
        Budget::Epochs(_) => usize::MAX,
    };
    let start = std::time::Instant::now();
    let mut history = Vec::new();
    let mut steps_done = 0usize;
    while let Some(left) = steps_left {
        if cfg.dual_refresh && solver.state.k > 0 {
            solver.reset_duals(&model.all_scores(&w))?;
        }
        let step = solver.outer_step(&mut model, &w, left)?;
        w = step.w;
        steps_done += step.record.steps;
        let (objective, pauc) = data.evaluate(&w, cfg.loss, cfg.alpha, cfg.beta)?;
        history.push(AgdRecord {
            iter: step.record.k,
            epochs: steps_done as f64 * per_step / n_total,
            objective,
            pauc,
            seconds: start.elapsed().as_secs_f64(),
            sbcd: Some(step.record.diagnostics),
        });
        steps_left = match budget {
            Budget::Outer(_) if history.len() >= max_outer => None,
            Budget::Outer(_) => Some(usize::MAX),
            // A remainder smaller than one step per call is left unused.
            Budget::Epochs(_) => left
                .checked_sub(step.record.steps)
                .filter(|&l| l >= solver.calls()),
        };
    }
    Ok((w, history))
}
