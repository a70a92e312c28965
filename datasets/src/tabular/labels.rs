//! How a tabular reader takes its label column ([`LabelColumn`], [`Labels`]) and the mapping of
//! two label values to -1/+1.

use std::path::Path;

use super::Tabular;
use crate::error::{DataError, list};

/// Which column of a delimited file holds the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelColumn {
    /// The first column.
    First,
    /// The last column.
    Last,
}

/// How a reader takes the label column's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Labels {
    /// Two values, the larger mapped to +1 and the smaller to -1 (0/1, -1/+1, 1/2 all work).
    #[default]
    Binary,
    /// Real targets kept as they are, for the regression losses (absolute and
    /// epsilon-insensitive) of Pdprox: a table made by [`Tabular::with_targets`].
    Targets,
}

impl Labels {
    /// The table of `labels` (as read, from the rows at `lines`) and its features.
    pub(crate) fn table(
        self,
        name: String,
        d: usize,
        x: Vec<f64>,
        labels: Vec<f64>,
        lines: &[usize],
        path: &Path,
    ) -> Result<Tabular, DataError> {
        match self {
            Labels::Binary => Tabular::new(name, d, x, binary_labels(&labels, lines, path)?, None),
            Labels::Targets => Tabular::with_targets(name, d, x, labels),
        }
    }
}

/// Map two distinct label values to -1 (the smaller) and +1 (the larger); a single value maps
/// by its sign (the one-class check comes later, where the task needs both classes). `lines`
/// holds the line of each label (empty when there are no lines to name).
pub(crate) fn binary_labels(
    labels: &[f64],
    lines: &[usize],
    path: &Path,
) -> Result<Vec<f64>, DataError> {
    let mut distinct: Vec<f64> = Vec::new();
    for (r, &l) in labels.iter().enumerate() {
        if !distinct.contains(&l) {
            distinct.push(l);
        }
        if distinct.len() > 2 {
            let message = format!(
                "more than two label values ({}): a binary task is expected",
                list(&distinct)
            );
            return Err(match lines.get(r) {
                Some(&line) => DataError::parse(path, line, message),
                None => DataError::invalid(path.display().to_string(), message),
            });
        }
    }
    distinct.sort_by(f64::total_cmp);
    let to_sign = |l: f64| {
        let positive = if distinct.len() == 2 {
            l == distinct[1]
        } else {
            l > 0.0
        };
        if positive { 1.0 } else { -1.0 }
    };
    Ok(labels.iter().map(|&l| to_sign(l)).collect())
}
