//! The delimited-text parser (CSV, TSV) behind [`super::read::read_csv`]: the header rule (only
//! the first non-empty line, when it names its columns or reads `0,1,2,...,k`), every other
//! line a row of finite numbers of one width, and an error naming the line, the column and the
//! field's text, with a hint where one is cheap.

use std::path::Path;

use super::Tabular;
use super::labels::{LabelColumn, Labels};
use crate::error::DataError;

/// Markers of a missing value (compared case-insensitively).
const MISSING: [&str; 9] = ["na", "n/a", "nan", "null", "none", "?", "-", ".", "missing"];

fn is_missing(field: &str) -> bool {
    MISSING.iter().any(|m| field.eq_ignore_ascii_case(m))
}

/// Separators other than `sep` that a field may hold when the file uses another one.
fn foreign_separator(field: &str, sep: char) -> Option<&'static str> {
    [(';', "';'"), ('\t', "a tab"), (',', "','"), ('|', "'|'")]
        .into_iter()
        .find(|&(c, _)| c != sep && field.contains(c))
        .map(|(_, name)| name)
        .or_else(|| field.contains(' ').then_some("spaces"))
}

/// The first non-empty line is a header when it names its columns: no field is a number, a
/// missing-value marker, numbers separated by spaces, or holds another separator (and some
/// field is not empty); or when it reads 0,1,2,...,k (a pandas column index).
fn is_header(fields: &[&str], sep: char) -> bool {
    let index_header =
        fields.len() > 2 && fields.iter().enumerate().all(|(k, f)| *f == k.to_string());
    let names = fields.iter().any(|f| !f.is_empty())
        && fields.iter().all(|f| {
            f.is_empty()
                || (f.parse::<f64>().is_err()
                    && !is_missing(f)
                    && foreign_separator(f, sep)
                        .filter(|&s| s != "spaces")
                        .is_none()
                    // "1 2 0": numbers separated by spaces, not a name.
                    && !f.split_whitespace().all(|t| t.parse::<f64>().is_ok()))
        });
    index_header || names
}

/// What a field of a row holds, for the messages.
#[derive(Clone, Copy)]
enum Role {
    Feature,
    Label,
    /// The target of the row with this 0-based index.
    Target(usize),
}

/// A field of a row as a finite number, or the message saying why not (column counted from 1).
fn parse_field(field: &str, column: usize, role: Role, sep: char) -> Result<f64, String> {
    match field.parse::<f64>() {
        Ok(v) if v.is_finite() && matches!(role, Role::Feature) && v.abs() > super::MAX_FEATURE => {
            Err(format!(
                "column {column}: the value '{field}' is beyond +-1e100, where the features' \
             squares and sums overflow; rescale the column"
            ))
        }
        Ok(v) if v.is_finite() => Ok(v),
        Ok(v) => {
            let what = match role {
                Role::Feature => "the value".to_string(),
                Role::Label => "the label".to_string(),
                Role::Target(r) => format!("the target of row {r} (rows counted from 0)"),
            };
            let hint = if v.is_nan() {
                " (a missing value?)"
            } else {
                ""
            };
            Err(format!(
                "column {column}: {what} '{field}' is not finite{hint}"
            ))
        }
        Err(_) => {
            let sep_name = if sep == '\t' { "tabs" } else { "','" };
            let hint = if field.is_empty() {
                " (an empty field: a missing value)".to_string()
            } else if is_missing(field) {
                " (a missing value: fill it in or drop the row)".to_string()
            } else if let Some(other) = foreign_separator(field, sep) {
                format!(" (fields are separated by {sep_name}; this one holds {other})")
            } else if field.contains(':') {
                " (an index:value pair: a LIBSVM file? read it as LIBSVM)".to_string()
            } else if field.starts_with(['"', '\'']) {
                " (quoted fields are not read: numbers only)".to_string()
            } else {
                match role {
                    Role::Label => {
                        " (labels must be numbers: two values such as 0/1 or -1/+1)".to_string()
                    }
                    Role::Target(_) => " (targets must be numbers)".to_string(),
                    Role::Feature => String::new(),
                }
            };
            Err(format!("column {column}: '{field}' is not a number{hint}"))
        }
    }
}

/// Parse `text` (the contents of `path`) with fields separated by `sep`, the label in `label`.
pub(crate) fn parse_delimited_at(
    text: &str,
    path: &Path,
    sep: char,
    label: LabelColumn,
    kind: Labels,
) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut labels = Vec::new();
    let mut lines = Vec::new();
    // (width, line) of the header and of the first row.
    let mut header: Option<(usize, usize)> = None;
    let mut width: Option<(usize, usize)> = None;
    let mut first = true;
    for (k, raw) in text.lines().enumerate() {
        let line_no = k + 1;
        let err = |message: String| DataError::parse(path, line_no, message);
        if raw.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = raw.split(sep).map(str::trim).collect();
        if std::mem::take(&mut first) && is_header(&fields, sep) {
            if let Some(c) = fields.iter().position(|f| f.is_empty()) {
                return Err(err(format!(
                    "the header leaves column {} unnamed (a pandas index column? write the \
                     file with index=False)",
                    c + 1
                )));
            }
            header = Some((fields.len(), line_no));
            continue;
        }
        let w = fields.len();
        let label_at = match label {
            LabelColumn::First => 0,
            LabelColumn::Last => w - 1,
        };
        let mut row = Vec::with_capacity(w);
        for (c, f) in fields.iter().enumerate() {
            let role = match (c == label_at, kind) {
                (false, _) => Role::Feature,
                (true, Labels::Binary) => Role::Label,
                (true, Labels::Targets) => Role::Target(labels.len()),
            };
            row.push(parse_field(f, c + 1, role, sep).map_err(&err)?);
        }
        if w < 2 {
            return Err(err("a row needs a label and at least one feature".into()));
        }
        match (width, header) {
            (Some((ww, wl)), _) if ww != w => {
                return Err(err(format!("{w} columns where line {wl} has {ww}")));
            }
            (None, Some((hw, hl))) if hw != w => {
                return Err(err(format!(
                    "{w} columns where the header (line {hl}) has {hw}"
                )));
            }
            (None, _) => width = Some((w, line_no)),
            _ => {}
        }
        let lab = row.remove(label_at);
        labels.push(lab);
        lines.push(line_no);
        x.extend_from_slice(&row);
    }
    let d = width.map_or(0, |(w, _)| w - 1);
    kind.table(path.display().to_string(), d, x, labels, &lines, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of `text` as a CSV file with the label last.
    fn csv_err(text: &str) -> String {
        parse_delimited_at(
            text,
            Path::new("f.csv"),
            ',',
            LabelColumn::Last,
            Labels::Binary,
        )
        .unwrap_err()
        .to_string()
    }

    fn csv_ok(text: &str) -> Tabular {
        parse_delimited_at(
            text,
            Path::new("f.csv"),
            ',',
            LabelColumn::Last,
            Labels::Binary,
        )
        .unwrap()
    }

    #[test]
    fn a_header_is_only_the_first_line_and_holds_no_number() {
        // A header, a pandas index header, none.
        assert_eq!(csv_ok("a,b,y\n1,2,0\n3,4,1\n").n(), 2);
        assert_eq!(csv_ok("0,1,2\n1,2,0\n3,4,1\n").n(), 2);
        assert_eq!(csv_ok("1,2,0\n3,4,1\n").n(), 2);
        assert_eq!(csv_ok("sepal length,sepal width,y\n1,2,0\n3,4,1\n").n(), 2);
        // Blank lines and CRLF endings are fine, and lines keep their physical numbers.
        let t = csv_ok("a,b,y\r\n\r\n1,2,0\r\n3,4,1\r\n");
        assert_eq!((t.n(), t.x.clone()), (2, vec![1.0, 2.0, 3.0, 4.0]));
        let e = csv_err("a,b,y\r\n\r\n1,2,0\r\n3,x,1\r\n");
        assert!(e.contains("line 4: column 2: 'x'"), "{e}");
        // yes/no labels: an error on the first row, header or not.
        let e = csv_err("1,2,yes\n3,4,no\n");
        assert!(
            e.contains("f.csv, line 1: column 3: 'yes' is not a number")
                && e.contains("labels must be numbers"),
            "{e}"
        );
        let e = csv_err("a,b,y\n1,2,yes\n3,4,no\n");
        assert!(e.contains("line 2: column 3: 'yes'"), "{e}");
        // A header is never a second line.
        let e = csv_err("a,b,y\nc,d,z\n1,2,0\n");
        assert!(e.contains("line 2: column 1: 'c' is not a number"), "{e}");
        // The header's width is the rows' width; an unnamed header column is refused.
        let e = csv_err("a,b\n1,2,0\n");
        assert!(
            e.contains("line 2: 3 columns where the header (line 1) has 2"),
            "{e}"
        );
        let e = csv_err(",a,y\n0,1,1\n1,2,0\n");
        assert!(
            e.contains("line 1") && e.contains("column 1 unnamed"),
            "{e}"
        );
    }

    #[test]
    fn missing_values_are_errors_of_the_same_shape_on_every_line() {
        for (text, line) in [
            ("1,NA,0\n3,4,1\n", 1),
            ("NA,NA,NA\n3,4,1\n", 1),
            ("a,b,y\n1,NA,0\n3,4,1\n", 2),
            ("1,2,0\n3,4,1\n5,NA,1\n", 3),
        ] {
            let e = csv_err(text);
            assert!(
                e.contains(&format!(
                    "f.csv, line {line}: column 2: 'NA' is not a number (a missing value"
                )) || e.contains(&format!(
                    "f.csv, line {line}: column 1: 'NA' is not a number (a missing value"
                )),
                "{text:?}: {e}"
            );
        }
        let e = csv_err("1,,0\n3,4,1\n");
        assert!(
            e.contains("line 1: column 2: '' is not a number (an empty field"),
            "{e}"
        );
        let e = csv_err("1,2,1\n3,nan,0\n");
        assert!(
            e.contains("line 2: column 2: the value 'nan' is not finite"),
            "{e}"
        );
        let e = csv_err("1,2,1\n3,-1e300,0\n");
        assert!(
            e.contains("line 2: column 2: the value '-1e300' is beyond +-1e100"),
            "{e}"
        );
        let e = csv_err("1,2,1\n3,inf,0\n");
        assert!(
            e.contains("line 2: column 2: the value 'inf' is not finite"),
            "{e}"
        );
        let e = csv_err("1,2,1\n3,4,-inf\n");
        assert!(
            e.contains("line 2: column 3: the label '-inf' is not finite"),
            "{e}"
        );
        let e = parse_delimited_at(
            "1,2,0.5\n3,4,inf\n",
            Path::new("f.csv"),
            ',',
            LabelColumn::Last,
            Labels::Targets,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 2: column 3: the target of row 1") && e.contains("not finite"),
            "{e}"
        );
    }

    #[test]
    fn other_separators_and_pairs_get_a_hint() {
        let e = csv_err("a;b;y\n1;2;0\n");
        assert!(
            e.contains("line 1: column 1: 'a;b;y' is not a number")
                && e.contains("fields are separated by ','; this one holds ';'"),
            "{e}"
        );
        let e = csv_err("1;2;0\n3;4;1\n");
        assert!(e.contains("line 1") && e.contains("holds ';'"), "{e}");
        let e = csv_err("1\t2\t0\n");
        assert!(e.contains("line 1") && e.contains("holds a tab"), "{e}");
        let e = csv_err("1 2 0\n");
        assert!(e.contains("holds spaces"), "{e}");
        let e = csv_err("1,2:0.5,0\n");
        assert!(e.contains("LIBSVM"), "{e}");
        let e = csv_err("\"1\",2,0\n");
        assert!(e.contains("quoted"), "{e}");
        // Tab-separated files keep a trailing empty field (an error), never drop it.
        let tsv = parse_delimited_at(
            "a\tb\ty\n1\t2\t0\n3\t4\t1\n",
            Path::new("f.tsv"),
            '\t',
            LabelColumn::Last,
            Labels::Binary,
        )
        .unwrap();
        assert_eq!(tsv.x, vec![1.0, 2.0, 3.0, 4.0]);
        let e = parse_delimited_at(
            "1\t2\t0\n3\t4\t\n",
            Path::new("f.tsv"),
            '\t',
            LabelColumn::Last,
            Labels::Binary,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line 2: column 3: ''"), "{e}");
    }
}
