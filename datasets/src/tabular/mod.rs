//! Tabular binary-classification data: the table ([`Tabular`]: rows with stable sample ids,
//! labels in {-1, +1}, optional fairness groups), the paper's preprocessing (standardized
//! columns, an intercept column), seeded splits and a linear model's scores on the rows. The
//! readers are in [`read`], the rank-based paper's sets in [`builtin`], generated sets in
//! [`synthetic`].
//!
//! Rows keep a stable sample id (their index in the file) through every split, because the
//! solvers keep per-sample state indexed by it.

pub mod builtin;
mod delimited;
pub mod donor;
pub(crate) mod format;
mod labels;
mod libsvm;
pub mod read;
pub mod synthetic;

/// The largest feature magnitude a file may hold, 1e100: the solvers square and sum the
/// features (norms, variances, Lipschitz constants, step sizes), and below this bound those
/// sums stay finite for any table of fewer than 1e108 entries; a larger value overflowed into
/// a NaN far from the file that caused it.
pub const MAX_FEATURE: f64 = 1e100;

use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::error::{DataError, list};

/// A dense binary-classification table.
#[derive(Debug, Clone, PartialEq)]
pub struct Tabular {
    /// Name of the set (file stem or built-in name).
    pub name: String,
    /// Number of features.
    pub d: usize,
    /// Features, row-major, `n * d` values.
    pub x: Vec<f64>,
    /// Labels in {-1, +1}, or real targets in a table made by [`Tabular::with_targets`].
    pub y: Vec<f64>,
    /// Stable sample ids: the row index in the original file.
    pub ids: Vec<usize>,
    /// Optional group per row (0 = privileged group G1, 1 = unprivileged G2) for fairness metrics.
    pub group: Option<Vec<u8>>,
    /// Whether `y` holds real targets ([`Tabular::with_targets`]) rather than labels.
    pub targets: bool,
}

impl Tabular {
    /// Number of rows.
    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// Row `i` of the feature matrix.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// Number of rows labelled +1.
    pub fn positives(&self) -> usize {
        self.y.iter().filter(|&&v| v > 0.0).count()
    }

    /// The scores `X w` of a linear model, one per row (`w` has `d` entries).
    ///
    /// # Panics
    /// If `w.len() != d`.
    pub fn scores(&self, w: &[f64]) -> Vec<f64> {
        row_scores(&self.x, self.d, w)
    }

    /// Build a table from parts, checking shapes, finiteness and labels.
    ///
    /// # Errors
    /// [`DataError::Invalid`] for an empty table, `x.len() != n * d`, a NaN/infinite feature, a
    /// label outside {-1, +1}, or a group vector of the wrong length.
    pub fn new(
        name: impl Into<String>,
        d: usize,
        x: Vec<f64>,
        y: Vec<f64>,
        group: Option<Vec<u8>>,
    ) -> Result<Self, DataError> {
        let name = name.into();
        let n = y.len();
        check_features(&name, n, d, &x)?;
        if let Some(pos) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
            return Err(DataError::invalid(
                &name,
                format!("label of row {pos} is {} (expected -1 or +1)", y[pos]),
            ));
        }
        if let Some(g) = &group
            && g.len() != n
        {
            return Err(DataError::invalid(
                &name,
                format!("{} groups for {n} rows", g.len()),
            ));
        }
        Ok(Tabular {
            name,
            d,
            x,
            y,
            ids: (0..n).collect(),
            group,
            targets: false,
        })
    }

    /// A table whose `y` holds real targets (the regression losses of Pdprox), checking shapes
    /// and that features and targets are finite.
    ///
    /// # Errors
    /// [`DataError::Invalid`] as [`Tabular::new`], and for a target that is not finite.
    pub fn with_targets(
        name: impl Into<String>,
        d: usize,
        x: Vec<f64>,
        y: Vec<f64>,
    ) -> Result<Self, DataError> {
        let name = name.into();
        let n = y.len();
        check_features(&name, n, d, &x)?;
        if let Some(pos) = y.iter().position(|v| !v.is_finite()) {
            return Err(DataError::invalid(
                &name,
                format!("target of row {pos} is not finite ({})", y[pos]),
            ));
        }
        Ok(Tabular {
            name,
            d,
            x,
            y,
            ids: (0..n).collect(),
            group: None,
            targets: true,
        })
    }

    /// Fail unless both classes are present.
    ///
    /// # Errors
    /// [`DataError::Invalid`] naming the missing class, or for a table of real targets.
    pub fn require_both_classes(&self) -> Result<(), DataError> {
        if self.targets {
            return Err(DataError::invalid(
                &self.name,
                "the table holds real targets, not two classes",
            ));
        }
        let pos = self.positives();
        if pos == 0 || pos == self.n() {
            let only = if pos == 0 { "-1" } else { "+1" };
            return Err(DataError::invalid(
                &self.name,
                format!(
                    "all {} rows have label {only}: a binary task needs both classes",
                    self.n()
                ),
            ));
        }
        Ok(())
    }

    /// Standardize every column to mean 0 and variance 1 (population variance, as
    /// scikit-learn's `StandardScaler`); constant columns become 0.
    pub fn standardize(&mut self) {
        let scaling = self.column_scaling();
        self.rescale(&scaling);
    }

    /// Per column `(mean, 1 / standard deviation)` (population variance; 0 for a constant
    /// column): what [`Tabular::standardize`] applies, kept to apply a training table's
    /// statistics to a test table.
    pub fn column_scaling(&self) -> Vec<(f64, f64)> {
        let (n, d) = (self.n(), self.d);
        (0..d)
            .map(|j| {
                let mean = (0..n).map(|i| self.x[i * d + j]).sum::<f64>() / n as f64;
                let var = (0..n)
                    .map(|i| (self.x[i * d + j] - mean).powi(2))
                    .sum::<f64>()
                    / n as f64;
                (mean, if var > 0.0 { 1.0 / var.sqrt() } else { 0.0 })
            })
            .collect()
    }

    /// `x_ij = (x_ij - mean_j) scale_j` with `scaling` from [`Tabular::column_scaling`].
    ///
    /// # Panics
    /// If `scaling` does not hold one entry per column.
    pub fn rescale(&mut self, scaling: &[(f64, f64)]) {
        assert_eq!(scaling.len(), self.d, "one (mean, scale) per column");
        if self.d == 0 {
            return;
        }
        for row in self.x.chunks_exact_mut(self.d) {
            for (v, &(mean, scale)) in row.iter_mut().zip(scaling) {
                *v = (*v - mean) * scale;
            }
        }
    }

    /// Append a constant feature 1 (an intercept for linear models without a bias term).
    pub fn with_intercept(mut self) -> Tabular {
        let (n, d) = (self.n(), self.d);
        let mut x = Vec::with_capacity(n * (d + 1));
        for i in 0..n {
            x.extend_from_slice(&self.x[i * d..(i + 1) * d]);
            x.push(1.0);
        }
        self.x = x;
        self.d = d + 1;
        self
    }

    /// The rows at `idx`, in that order, keeping their sample ids.
    pub fn subset(&self, idx: &[usize]) -> Tabular {
        let mut x = Vec::with_capacity(idx.len() * self.d);
        for &i in idx {
            x.extend_from_slice(self.row(i));
        }
        Tabular {
            name: self.name.clone(),
            d: self.d,
            x,
            y: idx.iter().map(|&i| self.y[i]).collect(),
            ids: idx.iter().map(|&i| self.ids[i]).collect(),
            group: self
                .group
                .as_ref()
                .map(|g| idx.iter().map(|&i| g[i]).collect()),
            targets: self.targets,
        }
    }

    /// A seeded random split into parts with the given fractions (e.g. `[0.6, 0.4]` or
    /// `[0.5, 0.25, 0.25]`); the last part takes the rounding remainder.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when a fraction is not positive, they do not sum to 1, or a part
    /// would be empty.
    pub fn split(&self, fractions: &[f64], seed: u64) -> Result<Vec<Tabular>, DataError> {
        let total: f64 = fractions.iter().sum();
        if fractions.is_empty() || fractions.iter().any(|&f| f <= 0.0) || (total - 1.0).abs() > 1e-9
        {
            return Err(DataError::invalid(
                &self.name,
                format!(
                    "split fractions ({}) must be positive and sum to 1",
                    list(fractions)
                ),
            ));
        }
        let mut order: Vec<usize> = (0..self.n()).collect();
        order.shuffle(&mut StdRng::seed_from_u64(seed));
        let mut parts = Vec::with_capacity(fractions.len());
        let mut start = 0;
        for (k, f) in fractions.iter().enumerate() {
            let end = if k + 1 == fractions.len() {
                self.n()
            } else {
                start + (f * self.n() as f64).round() as usize
            };
            if end <= start || end > self.n() {
                return Err(DataError::invalid(
                    &self.name,
                    format!(
                        "split ({}) of {} rows leaves part {k} empty",
                        list(fractions),
                        self.n()
                    ),
                ));
            }
            parts.push(self.subset(&order[start..end]));
            start = end;
        }
        Ok(parts)
    }

    /// The features as a `[n, d]` tensor, the labels as `[n]` (+1/-1) and the sample ids as an
    /// int tensor `[n]`, all on `device`.
    pub fn to_tensors(&self, device: &Device) -> (Tensor<2>, Tensor<1>, Tensor<1, Int>) {
        let x: Vec<f32> = self.x.iter().map(|&v| v as f32).collect();
        let y: Vec<f32> = self.y.iter().map(|&v| v as f32).collect();
        let ids: Vec<i32> = self.ids.iter().map(|&i| i as i32).collect();
        (
            Tensor::from_data(TensorData::new(x, [self.n(), self.d]), device),
            Tensor::from_data(TensorData::new(y, [self.n()]), device),
            Tensor::from_data(TensorData::new(ids, [self.n()]), device),
        )
    }
}

/// The shape and finiteness checks [`Tabular::new`] and [`Tabular::with_targets`] share: rows
/// and feature columns present, `n * d` values, every feature finite.
fn check_features(name: &str, n: usize, d: usize, x: &[f64]) -> Result<(), DataError> {
    if n == 0 {
        return Err(DataError::invalid(name, "no rows"));
    }
    if d == 0 {
        return Err(DataError::invalid(name, "no feature columns"));
    }
    if x.len() != n * d {
        return Err(DataError::invalid(
            name,
            format!("{} feature values for {n} rows of {d} features", x.len()),
        ));
    }
    if let Some(pos) = x.iter().position(|v| !v.is_finite()) {
        return Err(DataError::invalid(
            name,
            format!(
                "feature {} of row {} is not finite ({})",
                pos % d,
                pos / d,
                x[pos]
            ),
        ));
    }
    Ok(())
}

pub use rankrisk_core::math::vector::row_scores;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabular::builtin::load_builtin;

    #[test]
    fn intercept_appends_a_constant_column() {
        let t = load_builtin("titanic").unwrap().with_intercept();
        assert_eq!(t.d, 4);
        assert!((0..t.n()).all(|i| t.row(i)[3] == 1.0));
        assert_eq!(t.row(0)[..3], load_builtin("titanic").unwrap().row(0)[..]);
    }

    #[test]
    fn standardize_gives_zero_mean_unit_variance() {
        let mut t = load_builtin("australian").unwrap();
        t.standardize();
        for j in 0..t.d {
            let col: Vec<f64> = (0..t.n()).map(|i| t.x[i * t.d + j]).collect();
            let mean = col.iter().sum::<f64>() / col.len() as f64;
            let var = col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / col.len() as f64;
            assert!(
                mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-9,
                "column {j}: {mean} {var}"
            );
        }
    }

    #[test]
    fn split_is_seeded_disjoint_and_keeps_ids() {
        let t = load_builtin("titanic").unwrap();
        let a = t.split(&[0.5, 0.25, 0.25], 7).unwrap();
        let b = t.split(&[0.5, 0.25, 0.25], 7).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.iter().map(Tabular::n).sum::<usize>(), t.n());
        let mut ids: Vec<usize> = a.iter().flat_map(|p| p.ids.clone()).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..t.n()).collect::<Vec<_>>());
        let p = &a[1];
        for (k, &id) in p.ids.iter().enumerate() {
            assert_eq!(p.row(k), t.row(id));
        }
        assert!(t.split(&[0.5, 0.6], 1).is_err());
    }

    #[test]
    fn nan_feature_and_one_class_are_refused() {
        assert!(Tabular::new("t", 1, vec![f64::NAN], vec![1.0], None).is_err());
        let one = Tabular::new("t", 1, vec![1.0, 2.0], vec![1.0, 1.0], None).unwrap();
        let err = one.require_both_classes().unwrap_err().to_string();
        assert!(err.contains("+1"), "{err}");
    }
}
