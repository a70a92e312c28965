//! The LIBSVM/SVMlight parser behind [`super::read::read_libsvm`]: `label index:value ...`,
//! indices from 1 and strictly increasing within a row, `#` comments, label-only rows; the dense
//! table is allocated only after [`check_dense`] has accepted its size.

use std::path::Path;

use super::Tabular;
use super::labels::Labels;
use crate::error::DataError;
use crate::memory::check_dense;

/// One parsed LIBSVM row: its line, its label and its (0-based index, value) pairs.
type SparseRow = (usize, f64, Vec<(usize, f64)>);

/// Parse `text` (the contents of `path`); `d` fixes the dimension.
pub(crate) fn parse_libsvm(
    text: &str,
    path: &Path,
    d: Option<usize>,
    labels: Labels,
) -> Result<Tabular, DataError> {
    let mut rows: Vec<SparseRow> = Vec::new();
    let mut max_index = 0;
    for (k, line) in text.lines().enumerate() {
        let line_no = k + 1;
        let err = |message: String| DataError::parse(path, line_no, message);
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let mut tokens = content.split_whitespace();
        let label_tok = tokens.next().unwrap_or("");
        let label = match label_tok.parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            Ok(_) => return Err(err(format!("the label '{label_tok}' is not finite"))),
            Err(_) => {
                let hint = if label_tok.contains(':') {
                    " (a row starts with its label, then index:value pairs)"
                } else if label_tok.contains(',') {
                    " (LIBSVM separates by spaces: a CSV file? read it as CSV)"
                } else {
                    ""
                };
                return Err(err(format!(
                    "the label '{label_tok}' is not a number{hint}"
                )));
            }
        };
        let mut feats = Vec::new();
        let mut previous: Option<usize> = None;
        for tok in tokens {
            let Some((i_text, v_text)) = tok.split_once(':') else {
                return Err(err(format!(
                    "token '{tok}' is not index:value (pairs are separated by spaces)"
                )));
            };
            let i = parse_index(i_text).map_err(&err)?;
            if let Some(p) = previous {
                if i == p {
                    return Err(err(format!(
                        "feature index {i} appears twice (indices must be increasing)"
                    )));
                }
                if i < p {
                    return Err(err(format!(
                        "feature index {i} comes after {p}: indices must be increasing, as \
                         LIBSVM's tools require"
                    )));
                }
            }
            previous = Some(i);
            let v = match v_text.parse::<f64>() {
                Ok(v) if v.abs() > super::MAX_FEATURE && v.is_finite() => {
                    return Err(err(format!(
                        "the value '{v_text}' of index {i} is beyond +-1e100, where the \
                         features' squares and sums overflow; rescale the feature"
                    )));
                }
                Ok(v) if v.is_finite() => v,
                Ok(_) => {
                    return Err(err(format!(
                        "the value '{v_text}' of index {i} is not finite"
                    )));
                }
                Err(_) => {
                    return Err(err(format!(
                        "the value '{v_text}' of index {i} is not a number"
                    )));
                }
            };
            if let Some(d) = d
                && i > d
            {
                return Err(err(format!(
                    "feature index {i} exceeds the expected dimension {d} (that of the \
                     training data)"
                )));
            }
            max_index = max_index.max(i);
            feats.push((i - 1, v));
        }
        rows.push((line_no, label, feats));
    }
    let d = d.unwrap_or(max_index);
    let values = check_dense(rows.len(), d, 8, &path.display().to_string())?;
    let mut x = vec![0.0; values];
    for (r, (_, _, feats)) in rows.iter().enumerate() {
        for &(j, v) in feats {
            x[r * d + j] = v;
        }
    }
    let lines: Vec<usize> = rows.iter().map(|r| r.0).collect();
    let values: Vec<f64> = rows.iter().map(|r| r.1).collect();
    labels.table(path.display().to_string(), d, x, values, &lines, path)
}

/// A LIBSVM feature index: a positive integer that fits the address space.
fn parse_index(text: &str) -> Result<usize, String> {
    if text == "qid" {
        return Err("qid (SVMlight's query ids of ranking files) is not supported".into());
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("index '{text}' is not a positive integer"));
    }
    match text.parse::<usize>() {
        Ok(0) => Err("index 0: LIBSVM indices start at 1".into()),
        Ok(i) => Ok(i),
        Err(_) => Err(format!(
            "feature index {text} is too large: a table that wide needs more than 2^64 columns"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svm_err(text: &str, d: Option<usize>) -> String {
        parse_libsvm(text, Path::new("f.svm"), d, Labels::Binary)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn libsvm_indices_are_increasing_and_sizes_checked() {
        // Comments, blank lines and label-only rows.
        let t = parse_libsvm(
            "# a comment\n+1\n\n-1 2:2 # trailing\n+1 1:0.5 3:1\n",
            Path::new("f.svm"),
            None,
            Labels::Binary,
        )
        .unwrap();
        assert_eq!((t.n(), t.d), (3, 3));
        assert_eq!(t.x, vec![0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.5, 0.0, 1.0]);
        let e = svm_err("+1 1:1 3:2\n-1 2:1 2:5\n", None);
        assert!(
            e.contains("f.svm, line 2: feature index 2 appears twice"),
            "{e}"
        );
        let e = svm_err("+1 3:1 1:2\n", None);
        assert!(e.contains("line 1: feature index 1 comes after 3"), "{e}");
        let e = svm_err("+1 0:1\n", None);
        assert!(e.contains("index 0") && e.contains("start at 1"), "{e}");
        let e = svm_err("+1 qid:3 1:1\n", None);
        assert!(e.contains("qid"), "{e}");
        let e = svm_err("+1 1:nan\n", None);
        assert!(
            e.contains("line 1: the value 'nan' of index 1 is not finite"),
            "{e}"
        );
        let e = svm_err("+1 1:1\n-1 2:1e300\n", None);
        assert!(
            e.contains("line 2: the value '1e300' of index 2 is beyond +-1e100"),
            "{e}"
        );
        let e = svm_err("inf 1:1\n", None);
        assert!(e.contains("line 1: the label 'inf' is not finite"), "{e}");
        let e = svm_err("+1 1:1\n-1 4:1\n", Some(3));
        assert!(
            e.contains("line 2: feature index 4 exceeds the expected dimension 3"),
            "{e}"
        );
        // Huge indices: a size error naming the file, rows, width and bytes; never an abort.
        let e = svm_err("+1 1:1\n-1 1000000000000:1\n", None);
        assert!(
            e.contains("f.svm: 2 rows x 1000000000000 columns")
                && e.contains("16000000000000 bytes"),
            "{e}"
        );
        let e = svm_err("+1 1:1\n-1 18446744073709551615:1\n", None);
        assert!(
            e.contains("f.svm: 2 rows x 18446744073709551615 columns"),
            "{e}"
        );
        let e = svm_err("+1 1:1\n-1 1000000000000000000000000000000:1\n", None);
        assert!(e.contains("line 2") && e.contains("too large"), "{e}");
    }
}
