//! Confidence intervals and paired comparisons for ranking metrics, in the conventions of
//! pROC (Robin et al. 2011):
//!
//! - DeLong et al. (1988): the AUC's variance from its structural components
//!   `V10_i = (#{neg < pos_i} + #{neg = pos_i} / 2) / N-` and `V01_j` alike,
//!   `Var = S10 / N+ + S01 / N-` with `S` the sample variances (denominator `n - 1`); the
//!   interval `AUC +- z_{(1+level)/2} sqrt(Var)` clipped to `[0, 1]` (pROC's `ci.auc`,
//!   `method = "delong"`), and the paired test of two scorers on the same samples,
//!   `z = (A1 - A2) / sqrt(Var1 + Var2 - 2 Cov)` (pROC's `roc.test`, `method = "delong"`);
//! - the stratified bootstrap: `B` resamples drawn with replacement within each class (seeded;
//!   the draws are [`super::bootstrap::DRAW_SCHEME`], `super::draws`),
//!   the interval from the resamples' quantiles (R's default type 7, as pROC's
//!   `ci(..., method = "bootstrap")`), and the paired test of two scorers on the same resamples,
//!   `D = (t1 - t2) / sd(t1_b - t2_b)` (pROC's `roc.test`, `method = "bootstrap"`).
//!
//! Any statistic of the scores works with the bootstrap (our pAUC over `[alpha, beta]`, the
//! McClish pAUC, the two-way pAUC): [`bootstrap_interval`] and [`bootstrap_compare`] copy each
//! resample and call the statistic on it, `O(B n log n)` for `B` resamples of `n` scores. Our
//! pAUC has a path that sorts once and reads the same resamples as counts,
//! [`super::bootstrap`], `O(n log n + B n)`, which `rankrisk metrics` uses; both paths end in
//! [`interval_of_replicates`] and [`compare_replicates`].

use serde::{Deserialize, Serialize};

use super::auc::{MetricError, split_checked};
use super::draws::DrawBuffers;
use crate::math::order::{ascending, order_key};

/// An estimate with a two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The statistic on the data.
    pub estimate: f64,
    /// Lower end.
    pub lower: f64,
    /// Upper end.
    pub upper: f64,
    /// Coverage (0.95).
    pub level: f64,
}

/// A paired comparison of two scorers on the same samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedTest {
    /// First statistic minus second.
    pub difference: f64,
    /// Standard error of the difference.
    pub std_error: f64,
    /// `difference / std_error`.
    pub z: f64,
    /// Two-sided p-value of the normal approximation.
    pub p_value: f64,
}

impl PairedTest {
    /// The test of `difference` with standard error `std_error`: `z = difference / std_error`
    /// (0 for no difference at all, infinite for a difference without spread) and its
    /// two-sided normal p-value.
    pub fn from_difference(difference: f64, std_error: f64) -> PairedTest {
        let z = if std_error > 0.0 {
            difference / std_error
        } else if difference == 0.0 {
            0.0
        } else {
            difference.signum() * f64::INFINITY
        };
        PairedTest {
            difference,
            std_error,
            z,
            p_value: two_sided(z),
        }
    }
}

/// The standard normal distribution function.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// The standard normal quantile of `p` (bisection on [`normal_cdf`] to 1e-12).
///
/// # Errors
/// [`MetricError::BadLevel`] unless `0 < p < 1`.
pub fn normal_quantile(p: f64) -> Result<f64, MetricError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(MetricError::BadLevel(p));
    }
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

pub(crate) fn z_of_level(level: f64) -> Result<f64, MetricError> {
    if !(level > 0.0 && level < 1.0) {
        return Err(MetricError::BadLevel(level));
    }
    normal_quantile(0.5 + level / 2.0)
}

/// Two-sided p-value of `z` under the standard normal.
fn two_sided(z: f64) -> f64 {
    2.0 * normal_cdf(-z.abs())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sample covariance (denominator `n - 1`; 0 for a single value).
fn covariance(a: &[f64], b: &[f64]) -> f64 {
    if a.len() < 2 {
        return 0.0;
    }
    let (ma, mb) = (mean(a), mean(b));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - ma) * (y - mb))
        .sum::<f64>()
        / (a.len() - 1) as f64
}

/// The AUC with DeLong's variance (computed from the tied groups' counts by
/// [`super::ranked::RankedColumn::delong`]; [`Placements`] adds the per-sample components a
/// paired test needs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeLong {
    /// AUC (ties 1/2).
    pub auc: f64,
    /// DeLong's variance of the AUC.
    pub variance: f64,
}

impl DeLong {
    /// The interval `AUC +- z sqrt(Var)` at coverage `level`, clipped to `[0, 1]`.
    ///
    /// # Errors
    /// [`MetricError::BadLevel`] unless `0 < level < 1`.
    pub fn interval(&self, level: f64) -> Result<Interval, MetricError> {
        let half = z_of_level(level)? * self.variance.sqrt();
        Ok(Interval {
            estimate: self.auc,
            lower: (self.auc - half).max(0.0),
            upper: (self.auc + half).min(1.0),
            level,
        })
    }
}

/// DeLong's structural components (the placement values) of one scorer: `V10` per positive
/// and `V01` per negative, each class in index order, beside the AUC and variance they give;
/// what the paired test of two scorers on the same samples needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Placements {
    /// The AUC and its variance, equal to [`DeLong::new`]'s on the same scores.
    pub delong: DeLong,
    pub(crate) v10: Vec<f64>,
    pub(crate) v01: Vec<f64>,
}

impl Placements {
    /// DeLong's paired test of this AUC against `other`'s, computed on the same samples:
    /// `z = (A1 - A2) / sqrt(Var1 + Var2 - 2 Cov)`, `Cov` from the two scorers' components.
    ///
    /// # Errors
    /// [`MetricError::LengthMismatch`] when the two were computed on different samples.
    pub fn compare(&self, other: &Placements) -> Result<PairedTest, MetricError> {
        if self.v10.len() != other.v10.len() || self.v01.len() != other.v01.len() {
            return Err(MetricError::LengthMismatch {
                scores: self.v10.len() + self.v01.len(),
                labels: other.v10.len() + other.v01.len(),
            });
        }
        let cov = covariance(&self.v10, &other.v10) / self.v10.len() as f64
            + covariance(&self.v01, &other.v01) / self.v01.len() as f64;
        let (a, b) = (self.delong, other.delong);
        let std_error = (a.variance + b.variance - 2.0 * cov).max(0.0).sqrt();
        Ok(PairedTest::from_difference(a.auc - b.auc, std_error))
    }
}

/// R's default quantile (type 7) of sorted values: linear between the order statistics.
pub fn quantile_type7(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Settings of a stratified bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bootstrap {
    /// Resamples (pROC's default: 2000).
    pub resamples: usize,
    /// Seed of the resampling.
    pub seed: u64,
    /// Coverage of the interval.
    pub level: f64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 2000,
            seed: 0,
            level: 0.95,
        }
    }
}

/// An empty vector with room for `capacity` values, or [`MetricError::OutOfMemory`] naming
/// `what` instead of aborting the process when that cannot be allocated.
pub(crate) fn try_with_capacity<T>(
    capacity: usize,
    what: &'static str,
) -> Result<Vec<T>, MetricError> {
    let mut v = Vec::new();
    v.try_reserve_exact(capacity)
        .map_err(|_| MetricError::OutOfMemory {
            what,
            count: capacity,
        })?;
    Ok(v)
}

/// The statistic of each stratified resample, for every score column at once (so that paired
/// comparisons see the same resamples): each resample's counts drawn as
/// [`super::bootstrap`] draws them (along the first column's rank order, descending score and
/// ties by index), the resample copied (positives first, each sample as often as drawn, in
/// slot order) and handed to `stat`.
pub(crate) fn resampled<F>(
    columns: &[&[f64]],
    labels: &[f64],
    boot: &Bootstrap,
    stat: &F,
) -> Result<Vec<Vec<f64>>, MetricError>
where
    F: Fn(&[f64], &[f64]) -> Result<f64, MetricError>,
{
    if boot.resamples < 2 {
        return Err(MetricError::TooFewResamples(boot.resamples));
    }
    for c in columns {
        split_checked(c, labels)?;
    }
    let Some(first) = columns.first() else {
        return Ok(Vec::new());
    };
    // Each sample by slot: the k-th positive, then the k-th negative, in index order.
    let (pos, neg): (Vec<usize>, Vec<usize>) = (0..labels.len()).partition(|&i| labels[i] > 0.0);
    let by_slot: Vec<usize> = pos.iter().chain(&neg).copied().collect();
    let classes = (pos.len(), neg.len());
    // The first column's rank order of the slots.
    let mut order: Vec<(u64, usize)> = by_slot
        .iter()
        .enumerate()
        .map(|(slot, &i)| (!order_key(first[i]), slot))
        .collect();
    order.sort_unstable();
    let y: Vec<f64> = std::iter::repeat_n(1.0, classes.0)
        .chain(std::iter::repeat_n(-1.0, classes.1))
        .collect();
    let mut out = Vec::with_capacity(columns.len());
    for _ in columns {
        out.push(try_with_capacity(boot.resamples, "bootstrap replicates")?);
    }
    let mut draws = DrawBuffers::default();
    let mut counts = vec![0u32; labels.len()];
    let mut s = Vec::with_capacity(labels.len());
    for b in 0..boot.resamples {
        let slots = order.iter().map(|&(_, slot)| slot);
        draws.slot_counts(slots, (boot.seed, b), classes, &mut counts);
        for (c, col) in columns.iter().enumerate() {
            s.clear();
            for (&i, &k) in by_slot.iter().zip(&counts) {
                s.extend(std::iter::repeat_n(col[i], k as usize));
            }
            out[c].push(stat(&s, &y)?);
        }
    }
    Ok(out)
}

/// The interval of a stratified bootstrap from its replicates (the statistic on each
/// resample): R's type-7 quantiles at `(1 - level) / 2` and `(1 + level) / 2`, as pROC's
/// `ci(..., method = "bootstrap")`.
///
/// # Errors
/// [`MetricError::BadLevel`] unless `0 < level < 1`, [`MetricError::TooFewResamples`] for
/// fewer than 2 replicates.
pub fn interval_of_replicates(
    estimate: f64,
    mut replicates: Vec<f64>,
    level: f64,
) -> Result<Interval, MetricError> {
    z_of_level(level)?;
    if replicates.len() < 2 {
        return Err(MetricError::TooFewResamples(replicates.len()));
    }
    replicates.sort_by(ascending);
    let tail = (1.0 - level) / 2.0;
    Ok(Interval {
        estimate,
        lower: quantile_type7(&replicates, tail),
        upper: quantile_type7(&replicates, 1.0 - tail),
        level,
    })
}

/// The paired bootstrap test from the two scorers' replicates on the same resamples:
/// `difference / sd(first_b - second_b)` (pROC's `roc.test`, `method = "bootstrap"`).
pub fn compare_replicates(difference: f64, first: &[f64], second: &[f64]) -> PairedTest {
    let diffs: Vec<f64> = first.iter().zip(second).map(|(x, y)| x - y).collect();
    PairedTest::from_difference(difference, covariance(&diffs, &diffs).sqrt())
}

/// A stratified-bootstrap interval of `stat` (e.g. the pAUC over an FPR range) of `scores`.
/// Each resample is copied and handed to `stat`; for our pAUC,
/// [`super::bootstrap::bootstrap_pauc_interval`] gives the same interval without the copies.
///
/// # Errors
/// As `stat`, [`MetricError::TooFewResamples`] for fewer than 2 resamples,
/// [`MetricError::BadLevel`] for a level outside (0, 1).
pub fn bootstrap_interval<F>(
    scores: &[f64],
    labels: &[f64],
    boot: &Bootstrap,
    stat: F,
) -> Result<Interval, MetricError>
where
    F: Fn(&[f64], &[f64]) -> Result<f64, MetricError>,
{
    z_of_level(boot.level)?;
    let estimate = stat(scores, labels)?;
    let b = resampled(&[scores], labels, boot, &stat)?.remove(0);
    interval_of_replicates(estimate, b, boot.level)
}

/// The paired stratified-bootstrap test of `stat` between two scorers of the same samples.
///
/// # Errors
/// As [`bootstrap_interval`].
pub fn bootstrap_compare<F>(
    first: &[f64],
    second: &[f64],
    labels: &[f64],
    boot: &Bootstrap,
    stat: F,
) -> Result<PairedTest, MetricError>
where
    F: Fn(&[f64], &[f64]) -> Result<f64, MetricError>,
{
    let difference = stat(first, labels)? - stat(second, labels)?;
    let b = resampled(&[first, second], labels, boot, &stat)?;
    Ok(compare_replicates(difference, &b[0], &b[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DeLong's structural components by binary searches in sorted copies, written apart from
    /// the one-pass walk of [`Placements::new`]: `(V10 per positive, V01 per negative)`.
    fn components(pos: &[f64], neg: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut sn = neg.to_vec();
        sn.sort_by(ascending);
        let mut sp = pos.to_vec();
        sp.sort_by(ascending);
        let below = |sorted: &[f64], x: f64| sorted.partition_point(|v| ascending(v, &x).is_lt());
        let upto = |sorted: &[f64], x: f64| sorted.partition_point(|v| ascending(v, &x).is_le());
        let v10 = pos
            .iter()
            .map(|&x| {
                let (lt, le) = (below(&sn, x), upto(&sn, x));
                (lt as f64 + 0.5 * (le - lt) as f64) / neg.len() as f64
            })
            .collect();
        let v01 = neg
            .iter()
            .map(|&y| {
                let (at_or_above, above) = (sp.len() - below(&sp, y), sp.len() - upto(&sp, y));
                (above as f64 + 0.5 * (at_or_above - above) as f64) / pos.len() as f64
            })
            .collect();
        (v10, v01)
    }

    #[test]
    fn the_one_pass_components_equal_the_binary_searches_and_the_groups_sums_their_moments() {
        // Ties within and across the classes, -0.0 beside 0.0.
        let n = 997;
        let scores: Vec<f64> = (0..n)
            .map(|i| match i % 13 {
                0 => 0.0,
                1 => -0.0,
                k => ((i * 7919) % 31) as f64 * 0.25 - 3.0 + k as f64 * 1e-3 * (i % 2) as f64,
            })
            .collect();
        let labels: Vec<f64> = (0..n)
            .map(|i| if (i * 31) % 7 < 2 { 1.0 } else { -1.0 })
            .collect();
        let (pos, neg) = split_checked(&scores, &labels).unwrap();
        let (v10, v01) = components(&pos, &neg);
        let one_pass = Placements::new(&scores, &labels).unwrap();
        assert_eq!((&one_pass.v10, &one_pass.v01), (&v10, &v01));
        // The AUC and variance from the groups' counts equal the components' means and sample
        // variances (summed in another order: to rounding).
        let auc = mean(&v10);
        let variance =
            covariance(&v10, &v10) / v10.len() as f64 + covariance(&v01, &v01) / v01.len() as f64;
        let d = DeLong::new(&scores, &labels).unwrap();
        assert_eq!(one_pass.delong, d);
        // The groups' AUC is the exact count of half-pairs divided once; the components' means
        // are sums of 997 rounded terms (n eps ~ 1e-13).
        assert!((d.auc - auc).abs() < 1e-13, "{} vs {auc}", d.auc);
        assert!(
            (d.auc - mean(&v01)).abs() < 1e-13,
            "{} vs {}",
            d.auc,
            mean(&v01)
        );
        assert!(
            (d.variance - variance).abs() < 1e-15 * variance,
            "{} vs {variance}",
            d.variance
        );
    }
}
