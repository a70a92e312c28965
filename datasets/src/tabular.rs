//! Tabular binary-classification data: the rank-based paper's sets (embedded), CSV and LIBSVM
//! files, the paper's preprocessing (labels to -1/+1, standardized columns) and seeded splits.
//!
//! Rows keep a stable sample id (their index in the file) through every split, because the
//! solvers keep per-sample state indexed by it.

use std::path::Path;

use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::error::DataError;

/// A dense binary-classification table.
#[derive(Debug, Clone, PartialEq)]
pub struct Tabular {
    /// Name of the set (file stem or built-in name).
    pub name: String,
    /// Number of features.
    pub d: usize,
    /// Features, row-major, `n * d` values.
    pub x: Vec<f64>,
    /// Labels in {-1, +1}.
    pub y: Vec<f64>,
    /// Stable sample ids: the row index in the original file.
    pub ids: Vec<usize>,
    /// Optional group per row (0 = privileged group G1, 1 = unprivileged G2) for fairness metrics.
    pub group: Option<Vec<u8>>,
}

/// The data sets embedded in the crate (the rank-based paper's tabular sets).
pub const BUILTIN: [&str; 7] = [
    "australian",
    "phoneme",
    "titanic",
    "monks-3",
    "splice",
    "utkface",
    "synthetic[:n=..,d=..]",
];

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
        if n == 0 {
            return Err(DataError::invalid(&name, "no rows"));
        }
        if d == 0 {
            return Err(DataError::invalid(&name, "no feature columns"));
        }
        if x.len() != n * d {
            return Err(DataError::invalid(
                &name,
                format!("{} feature values for {n} rows of {d} features", x.len()),
            ));
        }
        if let Some(pos) = x.iter().position(|v| !v.is_finite()) {
            return Err(DataError::invalid(
                &name,
                format!(
                    "feature {} of row {} is not finite ({})",
                    pos % d,
                    pos / d,
                    x[pos]
                ),
            ));
        }
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
        })
    }

    /// Fail unless both classes are present.
    ///
    /// # Errors
    /// [`DataError::Invalid`] naming the missing class.
    pub fn require_both_classes(&self) -> Result<(), DataError> {
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
        let (n, d) = (self.n(), self.d);
        for j in 0..d {
            let mean = (0..n).map(|i| self.x[i * d + j]).sum::<f64>() / n as f64;
            let var = (0..n)
                .map(|i| (self.x[i * d + j] - mean).powi(2))
                .sum::<f64>()
                / n as f64;
            let scale = if var > 0.0 { 1.0 / var.sqrt() } else { 0.0 };
            for i in 0..n {
                self.x[i * d + j] = (self.x[i * d + j] - mean) * scale;
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
                format!("split fractions {fractions:?} must be positive and sum to 1"),
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
                        "split {fractions:?} of {} rows leaves part {k} empty",
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

const AUSTRALIAN: &str = include_str!("../data/tabular/australian.csv");
const PHONEME: &str = include_str!("../data/tabular/phoneme.csv");
const TITANIC: &str = include_str!("../data/tabular/titanic.csv");
const MONKS3: &str = include_str!("../data/tabular/monks-3.test");
const SPLICE: &str = include_str!("../data/tabular/splice.data");
const UTKFACE: &str = include_str!("../data/tabular/UTKFace/landmark_list_part3.txt");

/// Load one of the built-in sets ([`BUILTIN`]) with labels in {-1, +1} and raw (not yet
/// standardized) features. `utkface` carries the race group (white = 0, other = 1).
/// `synthetic[:n=..,d=..,...]` generates a set (see [`crate::synthetic::parse_spec`]).
///
/// # Errors
/// [`DataError::UnknownDataset`] for another name.
pub fn load_builtin(name: &str) -> Result<Tabular, DataError> {
    let key = name.trim().to_ascii_lowercase();
    match key.as_str() {
        "australian" => parse_delimited(AUSTRALIAN, "australian", ',', LabelColumn::Last),
        "phoneme" => parse_delimited(PHONEME, "phoneme", ',', LabelColumn::Last),
        "titanic" => parse_delimited(TITANIC, "titanic", ',', LabelColumn::Last),
        "monks-3" | "monks" | "monk" => parse_monks(MONKS3, "monks-3"),
        "splice" => parse_splice(SPLICE, "splice"),
        "utkface" => parse_utkface(UTKFACE, "utkface"),
        k if k == "synthetic" || k.starts_with("synthetic:") => {
            crate::synthetic::make_classification(&crate::synthetic::parse_spec(&key)?)
        }
        _ => Err(DataError::UnknownDataset(
            name.to_string(),
            BUILTIN.join(", "),
        )),
    }
}

/// Which column of a delimited file holds the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelColumn {
    /// The first column.
    First,
    /// The last column.
    Last,
}

/// Read a CSV file of numbers with the label in `label` column; labels 0/1 or -1/+1. A first
/// row that is not all numbers, or that reads 0,1,2,...,k (a pandas column index), is a header
/// and skipped.
///
/// # Errors
/// [`DataError::Io`] for an unreadable file, [`DataError::Parse`] naming the line of a malformed
/// row, [`DataError::Invalid`] for an empty table.
pub fn read_csv(path: &Path, label: LabelColumn) -> Result<Tabular, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path
        .file_stem()
        .map_or_else(|| "csv".into(), |s| s.to_string_lossy().into_owned());
    let mut t = parse_delimited_at(&text, path, ',', label)?;
    t.name = name;
    Ok(t)
}

/// Read a LIBSVM/SVMlight file (`label idx:value ...`, 1-based indices). Of the two label values
/// the larger becomes +1 (so 0/1, -1/+1 and 1/2 all work). `d` may fix the dimension (for a test
/// file that must match its training file), otherwise the largest index is used.
///
/// # Errors
/// [`DataError::Io`], [`DataError::Parse`] for a malformed token or an index above `d`.
pub fn read_libsvm(path: &Path, d: Option<usize>) -> Result<Tabular, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut rows: Vec<(f64, Vec<(usize, f64)>)> = Vec::new();
    let mut max_index = 0;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut tokens = line.split_whitespace();
        let label_tok = tokens.next().unwrap_or("");
        let label: f64 = label_tok.parse().map_err(|_| {
            DataError::parse(
                path,
                lineno + 1,
                format!("label '{label_tok}' is not a number"),
            )
        })?;
        let mut feats = Vec::new();
        for tok in tokens {
            let (i, v) = tok.split_once(':').ok_or_else(|| {
                DataError::parse(
                    path,
                    lineno + 1,
                    format!("token '{tok}' is not index:value"),
                )
            })?;
            let i: usize = i.parse().ok().filter(|&i| i >= 1).ok_or_else(|| {
                DataError::parse(
                    path,
                    lineno + 1,
                    format!("index '{i}' is not a positive integer"),
                )
            })?;
            let v: f64 = v.parse().map_err(|_| {
                DataError::parse(path, lineno + 1, format!("value '{v}' is not a number"))
            })?;
            max_index = max_index.max(i);
            feats.push((i - 1, v));
        }
        rows.push((label, feats));
    }
    let d = match d {
        Some(d) if max_index > d => {
            return Err(DataError::invalid(
                path.display().to_string(),
                format!("feature index {max_index} exceeds the expected dimension {d}"),
            ));
        }
        Some(d) => d,
        None => max_index,
    };
    let labels: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let y = binary_labels(&labels, path)?;
    let mut x = vec![0.0; rows.len() * d];
    for (r, (_, feats)) in rows.iter().enumerate() {
        for &(j, v) in feats {
            x[r * d + j] = v;
        }
    }
    let name = path
        .file_stem()
        .map_or_else(|| "libsvm".into(), |s| s.to_string_lossy().into_owned());
    Tabular::new(name, d, x, y, None)
}

/// Map two distinct label values to -1 (the smaller) and +1 (the larger); a single value maps
/// by its sign (the one-class check comes later, where the task needs both classes).
fn binary_labels(labels: &[f64], path: &Path) -> Result<Vec<f64>, DataError> {
    let mut distinct: Vec<f64> = Vec::new();
    for &l in labels {
        if !distinct.contains(&l) {
            distinct.push(l);
        }
        if distinct.len() > 2 {
            return Err(DataError::invalid(
                path.display().to_string(),
                format!("more than two label values ({distinct:?}): a binary task is expected"),
            ));
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

fn parse_delimited(
    text: &str,
    name: &str,
    sep: char,
    label: LabelColumn,
) -> Result<Tabular, DataError> {
    let mut t = parse_delimited_at(text, Path::new(name), sep, label)?;
    t.name = name.to_string();
    Ok(t)
}

fn parse_delimited_at(
    text: &str,
    path: &Path,
    sep: char,
    label: LabelColumn,
) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut labels = Vec::new();
    let mut width: Option<usize> = None;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(sep).map(str::trim).collect();
        let parsed: Result<Vec<f64>, _> = fields.iter().map(|f| f.parse::<f64>()).collect();
        let first_row = width.is_none() && labels.is_empty();
        // A pandas column-index header (0,1,2,...,k) is numeric but still a header.
        let index_header =
            fields.len() > 2 && fields.iter().enumerate().all(|(k, f)| *f == k.to_string());
        let values = match parsed {
            Ok(_) if first_row && index_header => continue,
            Ok(v) => v,
            Err(_) if first_row => continue, // a header row
            Err(_) => {
                let bad = fields
                    .iter()
                    .find(|f| f.parse::<f64>().is_err())
                    .unwrap_or(&"");
                return Err(DataError::parse(
                    path,
                    lineno + 1,
                    format!("field '{bad}' is not a number"),
                ));
            }
        };
        if values.len() < 2 {
            return Err(DataError::parse(
                path,
                lineno + 1,
                "a row needs a label and at least one feature",
            ));
        }
        match width {
            None => width = Some(values.len()),
            Some(w) if w != values.len() => {
                return Err(DataError::parse(
                    path,
                    lineno + 1,
                    format!("{} columns where earlier rows have {w}", values.len()),
                ));
            }
            Some(_) => {}
        }
        let (lab, feats) = match label {
            LabelColumn::First => (values[0], &values[1..]),
            LabelColumn::Last => (values[values.len() - 1], &values[..values.len() - 1]),
        };
        labels.push(lab);
        x.extend_from_slice(feats);
    }
    let d = width.map_or(0, |w| w - 1);
    let y = binary_labels(&labels, path)?;
    Tabular::new(path.display().to_string(), d, x, y, None)
}

fn parse_monks(text: &str, name: &str) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut labels = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        if tokens.len() != 8 {
            return Err(DataError::parse(
                name,
                lineno + 1,
                format!("{} fields, expected 8", tokens.len()),
            ));
        }
        let nums: Result<Vec<f64>, _> = tokens[..7].iter().map(|t| t.parse::<f64>()).collect();
        let nums = nums.map_err(|_| DataError::parse(name, lineno + 1, "non-numeric attribute"))?;
        labels.push(nums[0]);
        x.extend_from_slice(&nums[1..]);
    }
    let y = binary_labels(&labels, Path::new(name))?;
    Tabular::new(name, 6, x, y, None)
}

fn parse_splice(text: &str, name: &str) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 3 || fields[2].len() != 60 {
            return Err(DataError::parse(
                name,
                lineno + 1,
                "expected 'class, id, 60 letters'",
            ));
        }
        y.push(match fields[0] {
            "N" => -1.0,
            "EI" | "IE" => 1.0,
            other => {
                return Err(DataError::parse(
                    name,
                    lineno + 1,
                    format!("unknown class '{other}'"),
                ));
            }
        });
        for c in fields[2].chars() {
            if !c.is_ascii_alphabetic() {
                return Err(DataError::parse(
                    name,
                    lineno + 1,
                    format!("'{c}' is not a letter"),
                ));
            }
            // The paper's encoding: a = 1, ..., z = 26.
            x.push(f64::from(c.to_ascii_lowercase() as u8 - b'a' + 1));
        }
    }
    Tabular::new(name, 60, x, y, None)
}

fn parse_utkface(text: &str, name: &str) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut group = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let mut tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        // One row of the original file reads "NAME .jpg x1 y1 ...": the extension got split off.
        if tokens.len() == 138 && tokens[1] == ".jpg" {
            tokens.remove(1);
        }
        let parts: Vec<&str> = tokens[0].trim_end_matches(".jpg").split('_').collect();
        if parts.len() != 4 {
            continue; // the provenance note: skip names that do not split into 4 parts
        }
        if tokens.len() != 137 {
            return Err(DataError::parse(
                name,
                lineno + 1,
                format!("{} landmark values, expected 136", tokens.len() - 1),
            ));
        }
        let gender = parts[1];
        let race = parts[2];
        y.push(match gender {
            "0" => -1.0,
            "1" => 1.0,
            other => {
                return Err(DataError::parse(
                    name,
                    lineno + 1,
                    format!("gender '{other}' is not 0 or 1"),
                ));
            }
        });
        group.push(u8::from(race != "0"));
        for t in &tokens[1..] {
            x.push(t.parse::<f64>().map_err(|_| {
                DataError::parse(name, lineno + 1, format!("'{t}' is not a number"))
            })?);
        }
    }
    Tabular::new(name, 136, x, y, Some(group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_sets_match_their_provenance_counts() {
        // (name, rows, features, positives) from datasets/data/tabular/README.md
        let expected = [
            ("australian", 690, 14, 307),
            ("phoneme", 5404, 5, 1586),
            ("titanic", 2201, 3, 711),
            ("monks-3", 432, 6, 228),
            ("splice", 3190, 60, 1535),
        ];
        for (name, n, d, pos) in expected {
            let t = load_builtin(name).unwrap();
            assert_eq!((t.n(), t.d, t.positives()), (n, d, pos), "{name}");
            t.require_both_classes().unwrap();
        }
        let utk = load_builtin("utkface").unwrap();
        assert_eq!(utk.d, 136);
        assert_eq!(utk.n(), 3209);
        let g = utk.group.as_ref().unwrap();
        assert!(g.contains(&0) && g.contains(&1));
    }

    #[test]
    fn intercept_appends_a_constant_column() {
        let t = load_builtin("titanic").unwrap().with_intercept();
        assert_eq!(t.d, 4);
        assert!((0..t.n()).all(|i| t.row(i)[3] == 1.0));
        assert_eq!(t.row(0)[..3], load_builtin("titanic").unwrap().row(0)[..]);
    }

    #[test]
    fn unknown_name_lists_the_builtin_sets() {
        let err = load_builtin("mnist").unwrap_err().to_string();
        assert!(err.contains("mnist") && err.contains("australian"), "{err}");
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
    fn malformed_rows_name_file_and_line() {
        let dir = std::env::temp_dir().join(format!("rankrisk-tab-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("bad.csv");
        std::fs::write(&csv, "1,2,0\n3,4,1\n5,x,1\n").unwrap();
        let err = read_csv(&csv, LabelColumn::Last).unwrap_err().to_string();
        assert!(
            err.contains("bad.csv") && err.contains("line 3") && err.contains("'x'"),
            "{err}"
        );
        std::fs::write(&csv, "1,2,0\n3,1\n").unwrap();
        let err = read_csv(&csv, LabelColumn::Last).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("2 columns"), "{err}");
        let svm = dir.join("a.svm");
        std::fs::write(&svm, "+1 1:0.5 3:1\n-1 2:2\n").unwrap();
        let t = read_libsvm(&svm, None).unwrap();
        assert_eq!((t.n(), t.d), (2, 3));
        assert_eq!(t.x, vec![0.5, 0.0, 1.0, 0.0, 2.0, 0.0]);
        assert_eq!(t.y, vec![1.0, -1.0]);
        std::fs::write(&svm, "+1 1:0.5 3\n").unwrap();
        assert!(
            read_libsvm(&svm, None)
                .unwrap_err()
                .to_string()
                .contains("line 1")
        );
        let missing = read_csv(&dir.join("nope.csv"), LabelColumn::Last)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("nope.csv"), "{missing}");
    }

    #[test]
    fn nan_feature_and_one_class_are_refused() {
        assert!(Tabular::new("t", 1, vec![f64::NAN], vec![1.0], None).is_err());
        let one = Tabular::new("t", 1, vec![1.0, 2.0], vec![1.0, 1.0], None).unwrap();
        let err = one.require_both_classes().unwrap_err().to_string();
        assert!(err.contains("+1"), "{err}");
    }
}
