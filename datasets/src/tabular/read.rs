//! Readers of tabular files: CSV (label in the first or last column, an optional header) and
//! LIBSVM/SVMlight; labels of any two values become -1/+1. KEEL `.dat` files are read by
//! [`crate::keel`].

use std::path::Path;

use super::Tabular;
use crate::error::DataError;

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
    /// The table of `labels` (as read) and its features.
    fn table(
        self,
        name: String,
        d: usize,
        x: Vec<f64>,
        labels: Vec<f64>,
        path: &Path,
    ) -> Result<Tabular, DataError> {
        match self {
            Labels::Binary => Tabular::new(name, d, x, binary_labels(&labels, path)?, None),
            Labels::Targets => Tabular::with_targets(name, d, x, labels),
        }
    }
}

/// Read a CSV file of numbers with the label in `label` column; labels 0/1 or -1/+1. A first
/// row that is not all numbers, or that reads 0,1,2,...,k (a pandas column index), is a header
/// and skipped.
///
/// # Errors
/// [`DataError::Io`] for an unreadable file, [`DataError::Parse`] naming the line of a malformed
/// row, [`DataError::Invalid`] for an empty table.
pub fn read_csv(path: &Path, label: LabelColumn) -> Result<Tabular, DataError> {
    read_csv_as(path, label, Labels::Binary)
}

/// [`read_csv`] with the label column taken as `labels` says (real targets with
/// [`Labels::Targets`]).
///
/// # Errors
/// As [`read_csv`]; with [`Labels::Targets`], [`DataError::Invalid`] for a target that is not
/// finite instead of the two-values check.
pub fn read_csv_as(path: &Path, label: LabelColumn, labels: Labels) -> Result<Tabular, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path
        .file_stem()
        .map_or_else(|| "csv".into(), |s| s.to_string_lossy().into_owned());
    let mut t = parse_delimited_at(&text, path, ',', label, labels)?;
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
    read_libsvm_as(path, d, Labels::Binary)
}

/// [`read_libsvm`] with the labels taken as `labels` says (real targets with
/// [`Labels::Targets`], as LIBSVM's regression sets hold them).
///
/// # Errors
/// As [`read_libsvm`]; with [`Labels::Targets`], [`DataError::Invalid`] for a target that is
/// not finite instead of the two-values check.
pub fn read_libsvm_as(path: &Path, d: Option<usize>, labels: Labels) -> Result<Tabular, DataError> {
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
    let values: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let mut x = vec![0.0; rows.len() * d];
    for (r, (_, feats)) in rows.iter().enumerate() {
        for &(j, v) in feats {
            x[r * d + j] = v;
        }
    }
    let name = path
        .file_stem()
        .map_or_else(|| "libsvm".into(), |s| s.to_string_lossy().into_owned());
    labels.table(name, d, x, values, path)
}

/// Map two distinct label values to -1 (the smaller) and +1 (the larger); a single value maps
/// by its sign (the one-class check comes later, where the task needs both classes).
pub(crate) fn binary_labels(labels: &[f64], path: &Path) -> Result<Vec<f64>, DataError> {
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

pub(crate) fn parse_delimited(
    text: &str,
    name: &str,
    sep: char,
    label: LabelColumn,
) -> Result<Tabular, DataError> {
    let mut t = parse_delimited_at(text, Path::new(name), sep, label, Labels::Binary)?;
    t.name = name.to_string();
    Ok(t)
}

fn parse_delimited_at(
    text: &str,
    path: &Path,
    sep: char,
    label: LabelColumn,
    kind: Labels,
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
    kind.table(path.display().to_string(), d, x, labels, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_the_label_values() {
        let dir = std::env::temp_dir().join(format!("rankrisk-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (csv, svm) = (dir.join("t.csv"), dir.join("t.svm"));
        std::fs::write(&csv, "a,b,y\n1,2,0.5\n3,4,-2.25\n5,6,7\n").unwrap();
        std::fs::write(&svm, "0.5 1:1 2:2\n-2.25 2:4\n7 1:5\n").unwrap();
        let t = read_csv_as(&csv, LabelColumn::Last, Labels::Targets).unwrap();
        assert_eq!(
            (t.y.clone(), t.x.clone(), t.targets),
            (
                vec![0.5, -2.25, 7.0],
                vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                true
            )
        );
        assert!(t.require_both_classes().is_err());
        assert_eq!(t.subset(&[2, 0]).y, vec![7.0, 0.5]);
        assert!(t.subset(&[1]).targets);
        let s = read_libsvm_as(&svm, None, Labels::Targets).unwrap();
        assert_eq!(
            (s.y, s.x),
            (vec![0.5, -2.25, 7.0], vec![1.0, 2.0, 0.0, 4.0, 5.0, 0.0])
        );
        // As labels, three values are not a binary task.
        let err = read_csv(&csv, LabelColumn::Last).unwrap_err().to_string();
        assert!(err.contains("more than two label values"), "{err}");
        assert!(read_libsvm(&dir.join("t.svm"), None).is_err());
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
}
