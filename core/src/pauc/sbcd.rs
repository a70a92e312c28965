//! The pieces of AGD-SBCD (papers/partial-auc-fpr-range-agd-sbcd.txt, Algorithms 1-2) that
//! work on scores, not on a model: [`DualState`] (the per-positive `lambda_i` and their running
//! mean), the dual starts ([`exact_duals`], eq. (19)), [`block_step`] (the indicators
//! `1(s_ij > lambda_i)`, the score coefficients of `G_v` and the `lambda` update (15)),
//! [`prox_update`] (update (14) for a vector), the linear problem's data ([`PairData`]) and the
//! histories and diagnostics. The iterations themselves live once in [`crate::pauc::agd`];
//! [`PairSampler`] draws the blocks of the DCA baselines (Algorithm 4).

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::index::sample;

use crate::math::vector::row_scores;

use crate::math::order::descending;
use crate::math::vector::dot;
use crate::pauc::error::PaucError;
use crate::pauc::objective::{PairLoss, objective_and_score_grad};

/// Per-positive duals `lambda_i` of (12)-(13) and the running sum for their average.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DualState {
    /// Current `lambda^(t)`.
    pub lambda: Vec<f64>,
    sum: Vec<f64>,
    count: u64,
}

impl DualState {
    /// All duals at `init`.
    pub fn new(n_pos: usize, init: f64) -> Self {
        DualState {
            lambda: vec![init; n_pos],
            sum: vec![0.0; n_pos],
            count: 0,
        }
    }

    /// The running sum and the count of the average (what a record stores besides `lambda`).
    pub(crate) fn average_parts(&self) -> (&[f64], u64) {
        (&self.sum, self.count)
    }

    /// A state from its parts, as [`DualState::average_parts`] gives them.
    pub(crate) fn from_parts(lambda: Vec<f64>, sum: Vec<f64>, count: u64) -> Self {
        DualState { lambda, sum, count }
    }

    /// Start averaging afresh (Algorithm 1 averages over its own T iterations).
    pub fn reset_average(&mut self) {
        self.sum.iter_mut().for_each(|s| *s = 0.0);
        self.count = 0;
    }

    /// Add the current `lambda` to the average.
    pub fn accumulate(&mut self) {
        for (s, l) in self.sum.iter_mut().zip(&self.lambda) {
            *s += l;
        }
        self.count += 1;
    }

    /// The average since the last reset (the current value if nothing was accumulated).
    pub fn average(&self) -> Vec<f64> {
        if self.count == 0 {
            return self.lambda.clone();
        }
        self.sum.iter().map(|s| s / self.count as f64).collect()
    }
}

/// How the duals `lambda_i` of both levels start (and restart, with
/// [`crate::pauc::agd::AgdSbcdConfig::dual_refresh`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum DualInit {
    /// Every `lambda_i` at the pair loss of the mean positive and mean negative score, the same
    /// value for both levels (this project's first choice; Algorithm 2 leaves the start open).
    Mean,
    /// `lambda_{l,i}` at the midpoint of `Lambda*_i` of eq. (19) at `v = w`, between the l-th
    /// and (l+1)-th largest pair loss of positive i: the exact dual solution for the current
    /// model, so that the share of active pairs per level starts at alpha and beta.
    #[default]
    Exact,
}

/// The exact duals of eq. (19) at the given scores: for each positive i, the midpoint of
/// `Lambda*_i = [s_i[l+1], s_i[l]]` (its `l`-th and `(l+1)`-th largest pair losses
/// `loss(s_i - s_j)` over the negatives). For a fractional `l` the minimizer of `g^l` in
/// `lambda_i` is the single point `s_i[ceil(l)]`. Then `1(s_ij > lambda_i)` holds for
/// `floor(l)` negatives of each positive (ties aside): the share `l / N-` that the level
/// stands for. `l = 0` puts `lambda_i` above every pair loss, `l = N-` below every one.
pub fn exact_duals(loss: PairLoss, pos_scores: &[f64], neg_scores: &[f64], level: f64) -> Vec<f64> {
    let n = neg_scores.len();
    let mut pair = vec![0.0; n];
    pos_scores
        .iter()
        .map(|&sp| {
            for (p, &sn) in pair.iter_mut().zip(neg_scores) {
                *p = loss.value(sp - sn);
            }
            // Descending order: the k-th largest (1-based) sits at index k - 1.
            pair.sort_unstable_by(descending);
            let whole = level.floor();
            let k = whole as usize;
            if level > whole {
                // Fractional level: the ceil(l)-th largest.
                return pair[k.min(n - 1)];
            }
            match k {
                0 => pair[0] + 1.0,
                k if k >= n => pair[n - 1] - 1.0,
                k => 0.5 * (pair[k - 1] + pair[k]),
            }
        })
        .collect()
}

/// The duals of levels `lo` (m) and `hi` (n) at the scores of a model, as `init` says: eq. (19)
/// ([`exact_duals`]) or one common value, the pair loss of the mean positive and mean negative
/// score. The one place both the linear and the deep solver start (and restart) their duals.
pub fn start_duals(
    init: DualInit,
    loss: PairLoss,
    pos_scores: &[f64],
    neg_scores: &[f64],
    (lo, hi): (f64, f64),
) -> (Vec<f64>, Vec<f64>) {
    match init {
        DualInit::Exact => (
            exact_duals(loss, pos_scores, neg_scores, lo),
            exact_duals(loss, pos_scores, neg_scores, hi),
        ),
        DualInit::Mean => {
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let value = loss.value(mean(pos_scores) - mean(neg_scores));
            (vec![value; pos_scores.len()], vec![value; pos_scores.len()])
        }
    }
}

/// What one SBCD call did, for the run's diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CallStats {
    /// Share of the sampled pairs with `s_ij > lambda_i` (active), averaged over the steps;
    /// at the dual optimum it is `l / N-` (alpha for level m, beta for level n).
    pub active_share: f64,
    /// Steps run.
    pub steps: usize,
    /// `eta` in use (update (14)).
    pub eta: f64,
    /// `theta` in use (update (15)).
    pub theta: f64,
}

impl CallStats {
    /// Add one step's active pairs out of `pairs`.
    pub fn record(&mut self, active: usize, pairs: usize) {
        let share = active as f64 / pairs.max(1) as f64;
        self.steps += 1;
        self.active_share += (share - self.active_share) / self.steps as f64;
    }
}

/// Mean and standard deviation of `lambda_m,i - lambda_n,i` over the positives: how far apart
/// the two levels' thresholds are (zero means the m- and n-calls see the same active pairs and
/// the AGD step cancels).
pub fn dual_gap(duals_m: &DualState, duals_n: &DualState) -> (f64, f64) {
    let gaps: Vec<f64> = duals_m
        .lambda
        .iter()
        .zip(&duals_n.lambda)
        .map(|(a, b)| a - b)
        .collect();
    let n = gaps.len().max(1) as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Draws the `I` positives and `J` negatives of one SBCD step, without replacement.
#[derive(Debug, Clone)]
pub struct PairSampler {
    rng: StdRng,
    /// Positives per step.
    pub i: usize,
    /// Negatives per step.
    pub j: usize,
}

impl PairSampler {
    /// A seeded sampler; `i` and `j` are clamped to the class sizes when sampling.
    pub fn new(i: usize, j: usize, seed: u64) -> Self {
        PairSampler {
            rng: StdRng::seed_from_u64(seed),
            i: i.max(1),
            j: j.max(1),
        }
    }

    /// Indices of the sampled positives and negatives.
    pub fn draw(&mut self, n_pos: usize, n_neg: usize) -> (Vec<usize>, Vec<usize>) {
        let pi = sample(&mut self.rng, n_pos, self.i.min(n_pos)).into_vec();
        let nj = sample(&mut self.rng, n_neg, self.j.min(n_neg)).into_vec();
        (pi, nj)
    }
}

/// Result of one block step on the CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockGrads {
    /// Coefficient of `grad h(x_i+)` in `G_v`, per sampled positive.
    pub pos: Vec<f64>,
    /// Coefficient of `grad h(x_j-)` in `G_v`, per sampled negative.
    pub neg: Vec<f64>,
    /// Sampled pairs with `s_ij > lambda_i` (the indicator of steps 5 and 7).
    pub active: usize,
}

/// One SBCD block computation from the sampled scores: the score coefficients of the stochastic
/// subgradient `G_v` (step 5 of Algorithm 1) and the update (15) of the sampled duals with step
/// `theta` for the level `l`.
///
/// `pos_scores[a]` belongs to positive `pos_idx[a]`; `n_pos`, `n_neg` are the class sizes.
#[allow(clippy::too_many_arguments)]
pub fn block_step(
    loss: PairLoss,
    pos_scores: &[f64],
    neg_scores: &[f64],
    pos_idx: &[usize],
    duals: &mut DualState,
    l: f64,
    theta: f64,
    n_pos: usize,
    n_neg: usize,
) -> BlockGrads {
    let (ii, jj) = (pos_scores.len() as f64, neg_scores.len() as f64);
    let scale = n_pos as f64 * n_neg as f64 / (ii * jj);
    let mut g_pos = vec![0.0; pos_scores.len()];
    let mut g_neg = vec![0.0; neg_scores.len()];
    let mut lambda_new = Vec::with_capacity(pos_idx.len());
    let mut total_active = 0;
    for (a, (&sp, &i)) in pos_scores.iter().zip(pos_idx).enumerate() {
        let lambda_i = duals.lambda[i];
        let mut active = 0usize;
        for (b, &sn) in neg_scores.iter().enumerate() {
            let t = sp - sn;
            if loss.value(t) > lambda_i {
                active += 1;
                let d = scale * loss.derivative(t);
                g_pos[a] += d;
                g_neg[b] -= d;
            }
        }
        total_active += active;
        let g_lambda = l - n_neg as f64 / jj * active as f64;
        lambda_new.push(lambda_i - theta * g_lambda);
    }
    for (&i, v) in pos_idx.iter().zip(lambda_new) {
        duals.lambda[i] = v;
    }
    BlockGrads {
        pos: g_pos,
        neg: g_neg,
        active: total_active,
    }
}

/// The closed-form proximal update (14): `v = (v_t / eta + w / mu - G) / (1/eta + 1/mu)`.
pub fn prox_update(v: &mut [f64], w: &[f64], g: &[f64], eta: f64, mu: f64) {
    let denom = 1.0 / eta + 1.0 / mu;
    for ((vk, &wk), &gk) in v.iter_mut().zip(w).zip(g) {
        *vk = (*vk / eta + wk / mu - gk) / denom;
    }
}

/// Positive and negative feature rows of a linear pAUC problem.
#[derive(Debug, Clone)]
pub struct PairData {
    /// Positive rows, row-major.
    pub pos: Vec<f64>,
    /// Negative rows, row-major.
    pub neg: Vec<f64>,
    /// Number of features.
    pub d: usize,
}

impl PairData {
    /// Split rows by label (`y > 0` positive).
    ///
    /// # Errors
    /// [`PaucError::Shape`] when shapes disagree, [`PaucError::OneClass`] when a class is empty.
    pub fn new(x: &[f64], y: &[f64], d: usize) -> Result<Self, PaucError> {
        if d == 0 || x.len() != y.len() * d {
            return Err(PaucError::Shape {
                values: x.len(),
                rows: y.len(),
                d,
            });
        }
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        for (row, &label) in x.chunks_exact(d).zip(y) {
            if label > 0.0 {
                pos.extend_from_slice(row);
            } else {
                neg.extend_from_slice(row);
            }
        }
        if pos.is_empty() || neg.is_empty() {
            return Err(PaucError::OneClass {
                positives: pos.len() / d,
                negatives: neg.len() / d,
            });
        }
        Ok(PairData { pos, neg, d })
    }

    /// Number of positives.
    pub fn n_pos(&self) -> usize {
        self.pos.len() / self.d
    }

    /// Number of negatives.
    pub fn n_neg(&self) -> usize {
        self.neg.len() / self.d
    }

    /// Scores of the positives `pi` and the negatives `nj` (one SBCD sample).
    pub fn sampled_scores(&self, pi: &[usize], nj: &[usize], w: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let d = self.d;
        (
            pi.iter()
                .map(|&i| dot(&self.pos[i * d..(i + 1) * d], w))
                .collect(),
            nj.iter()
                .map(|&j| dot(&self.neg[j * d..(j + 1) * d], w))
                .collect(),
        )
    }

    /// Scores of all positives and negatives.
    pub fn scores(&self, w: &[f64]) -> (Vec<f64>, Vec<f64>) {
        (
            row_scores(&self.pos, self.d, w),
            row_scores(&self.neg, self.d, w),
        )
    }

    /// `g += sum_a pos_coef[a] x+_{pos_idx[a]} + sum_b neg_coef[b] x-_{neg_idx[b]}`: score
    /// coefficients turned into the parameter gradient of the linear model.
    pub fn add_rows(
        &self,
        g: &mut [f64],
        pos_idx: &[usize],
        pos_coef: &[f64],
        neg_idx: &[usize],
        neg_coef: &[f64],
    ) {
        let d = self.d;
        let pos = pos_idx
            .iter()
            .zip(pos_coef)
            .map(|(&i, c)| (&self.pos[i * d..(i + 1) * d], c));
        let neg = neg_idx
            .iter()
            .zip(neg_coef)
            .map(|(&j, c)| (&self.neg[j * d..(j + 1) * d], c));
        for (row, &c) in pos.chain(neg) {
            for (gk, &xk) in g.iter_mut().zip(row) {
                *gk += c * xk;
            }
        }
    }

    /// Objective (3) and normalized pAUC at `w`, for the histories.
    ///
    /// # Errors
    /// [`PaucError::IterateDiverged`] / [`PaucError::ObjectiveDiverged`] when `w` or the
    /// objective is not finite (a diverged solver stops here, at its first record), or as
    /// [`objective_and_score_grad`].
    pub fn evaluate(
        &self,
        w: &[f64],
        loss: PairLoss,
        alpha: f64,
        beta: f64,
    ) -> Result<(f64, f64), PaucError> {
        if let Some((index, &value)) = w.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(PaucError::IterateDiverged { index, value });
        }
        let (objective, _) = self.objective_grad(w, loss, alpha, beta)?;
        if !objective.is_finite() {
            return Err(PaucError::ObjectiveDiverged { value: objective });
        }
        let (sp, sn) = self.scores(w);
        let labels: Vec<f64> = std::iter::repeat_n(1.0, sp.len())
            .chain(std::iter::repeat_n(-1.0, sn.len()))
            .collect();
        let scores: Vec<f64> = sp.into_iter().chain(sn).collect();
        let pauc = crate::metrics::pauc(&scores, &labels, alpha, beta)?;
        Ok((objective, pauc))
    }

    /// Objective (3) at `w` (normalized) and its gradient in `w`.
    ///
    /// # Errors
    /// As [`objective_and_score_grad`].
    pub fn objective_grad(
        &self,
        w: &[f64],
        loss: PairLoss,
        alpha: f64,
        beta: f64,
    ) -> Result<(f64, Vec<f64>), PaucError> {
        let (sp, sn) = self.scores(w);
        let (value, gp, gn) = objective_and_score_grad(&sp, &sn, loss, alpha, beta)?;
        let mut g = vec![0.0; self.d];
        let all_pos: Vec<usize> = (0..self.n_pos()).collect();
        let all_neg: Vec<usize> = (0..self.n_neg()).collect();
        self.add_rows(&mut g, &all_pos, &gp, &all_neg, &gn);
        Ok((value, g))
    }
}

/// One row of the AGD history.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AgdRecord {
    /// Outer iteration (1-based).
    pub iter: usize,
    /// Samples processed so far divided by the training set size.
    pub epochs: f64,
    /// Objective (3) at `w`.
    pub objective: f64,
    /// Normalized training pAUC at `w`.
    pub pauc: f64,
    /// Seconds since the start.
    pub seconds: f64,
    /// AGD-SBCD's per-iteration diagnostics (None for the baselines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sbcd: Option<OuterDiagnostics>,
}

/// What one outer iteration of AGD-SBCD did: the numbers that tell whether the two levels'
/// duals are where they should be and which step sizes were in use.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OuterDiagnostics {
    /// Share of active sampled pairs in the level-m call (target alpha; NaN without an
    /// m-call, alpha = 0).
    pub active_m: f64,
    /// Share of active sampled pairs in the level-n call (target beta).
    pub active_n: f64,
    /// Mean over the positives of `lambda_m,i - lambda_n,i` after the iteration.
    pub gap_mean: f64,
    /// Standard deviation of `lambda_m,i - lambda_n,i`.
    pub gap_std: f64,
    /// `eta` of update (14).
    pub eta: f64,
    /// `theta` of update (15).
    pub theta: f64,
    /// The AGD step's `gamma / mu`.
    pub gamma_over_mu: f64,
}

impl OuterDiagnostics {
    /// From the two calls' statistics (`m` is None without an m-call) and the duals after the
    /// iteration.
    pub fn new(
        m: Option<CallStats>,
        n: CallStats,
        duals_m: &DualState,
        duals_n: &DualState,
        gamma_over_mu: f64,
    ) -> Self {
        let (gap_mean, gap_std) = dual_gap(duals_m, duals_n);
        OuterDiagnostics {
            active_m: m.map_or(f64::NAN, |s| s.active_share),
            active_n: n.active_share,
            gap_mean,
            gap_std,
            eta: n.eta,
            theta: n.theta,
            gamma_over_mu,
        }
    }
}
