//! Readers of tabular files: delimited text (CSV, TSV: the label in the first or last column, an
//! optional header) and LIBSVM/SVMlight; labels of any two values become -1/+1, or real targets
//! are kept. KEEL `.dat` files are read by [`crate::keel`].
//!
//! Rules (every error names the file and the physical line, counted from 1):
//!
//! - Delimited files: a header is a header only if it is the first non-empty line and holds no
//!   number (nor a missing-value marker such as `NA`, nor a field holding another separator),
//!   or if it reads `0,1,2,...,k` (a pandas column index). Every other line is a row: a field
//!   that is not a finite number is an error naming its column (counted from 1) and its text,
//!   with a hint where one is cheap (a missing value, another separator, a LIBSVM pair, a
//!   quoted field, a label that is not a number). Every row has the width of the first (and of
//!   the header).
//! - LIBSVM: `label index:value ...` with indices from 1, strictly increasing within a row (as
//!   LIBSVM's own tools and scikit-learn's reader require: a repeated index is an error, not
//!   "the last one wins"); `#` starts a comment; a row may hold the label alone. The dense
//!   table is allocated only after [`crate::memory::check_dense`] has accepted its size.
//! - [`read_table`] picks the format: the one given, else by the extension (`.csv`; `.tsv`,
//!   `.tab`; `.svm`, `.libsvm`, `.svmlight`), else by the first line that is not blank, not a
//!   `#` comment and not a lone value: commas make it CSV, `index:value` tokens after the first
//!   make it LIBSVM, tabs make it TSV. An error of a file read in a format it chose says which
//!   format and why ([`DataError::Format`]).
//!
//! The format choice is in [`guess_format`] (module `format`), the parsers in the private
//! modules `delimited` and `libsvm`.

use std::path::Path;

use super::Tabular;
use super::delimited::parse_delimited_at;
pub use super::format::{FormatChoice, FormatReason, TableFormat, guess_format};
pub use super::labels::{LabelColumn, Labels};
use super::libsvm::parse_libsvm;
use crate::error::DataError;
use crate::text::read_text;

/// Read a tabular file in `format`, or in the format [`guess_format`] picks when it is `None`:
/// the label in the `label` column of a delimited file (LIBSVM's is always first), the labels
/// taken as `labels` says, `d` the dimension of a LIBSVM file (see [`read_libsvm`]). Returns
/// the table and the format it was read as.
///
/// # Errors
/// [`DataError::Io`], [`DataError::NotUtf8`]; the reader's error wrapped in
/// [`DataError::Format`], which says the format and why it was chosen.
pub fn read_table(
    path: &Path,
    format: Option<TableFormat>,
    d: Option<usize>,
    label: LabelColumn,
    labels: Labels,
) -> Result<(Tabular, FormatChoice), DataError> {
    let text = read_text(path)?;
    let choice = match format {
        Some(format) => FormatChoice {
            format,
            reason: FormatReason::Given,
        },
        None => guess_format(path, &text),
    };
    let table = match choice.format {
        TableFormat::Csv => parse_delimited_at(&text, path, ',', label, labels),
        TableFormat::Tsv => parse_delimited_at(&text, path, '\t', label, labels),
        TableFormat::Libsvm => parse_libsvm(&text, path, d, labels),
    };
    match table {
        Ok(mut t) => {
            t.name = stem(path, "table");
            Ok((t, choice))
        }
        Err(e @ (DataError::Parse { .. } | DataError::Invalid { .. })) => Err(DataError::Format {
            choice,
            source: Box::new(e),
        }),
        Err(e) => Err(e),
    }
}

fn stem(path: &Path, default: &str) -> String {
    path.file_stem()
        .map_or_else(|| default.into(), |s| s.to_string_lossy().into_owned())
}

/// Read a CSV file of numbers with the label in `label` column; labels of two values (0/1,
/// -1/+1, ...). The first non-empty line is a header when it holds no number, or when it reads
/// 0,1,2,...,k (a pandas column index); every other line is a row (see the module's rules).
///
/// # Errors
/// [`DataError::Io`] for an unreadable file, [`DataError::NotUtf8`], [`DataError::Parse`]
/// naming the line (and the column and text of a field) of a malformed row, a field that is
/// not a finite number, a row of another width, or a third label value; [`DataError::Invalid`]
/// for an empty table.
pub fn read_csv(path: &Path, label: LabelColumn) -> Result<Tabular, DataError> {
    read_csv_as(path, label, Labels::Binary)
}

/// [`read_csv`] with the label column taken as `labels` says (real targets with
/// [`Labels::Targets`]).
///
/// # Errors
/// As [`read_csv`]; with [`Labels::Targets`] the two-values check is not made.
pub fn read_csv_as(path: &Path, label: LabelColumn, labels: Labels) -> Result<Tabular, DataError> {
    read_delimited_as(path, ',', label, labels)
}

/// [`read_csv_as`] for fields separated by `sep` (`'\t'` for TSV).
///
/// # Errors
/// As [`read_csv`].
pub fn read_delimited_as(
    path: &Path,
    sep: char,
    label: LabelColumn,
    labels: Labels,
) -> Result<Tabular, DataError> {
    let text = read_text(path)?;
    let mut t = parse_delimited_at(&text, path, sep, label, labels)?;
    t.name = stem(path, "csv");
    Ok(t)
}

/// Read a LIBSVM/SVMlight file (`label index:value ...`, 1-based indices, increasing within a
/// row). Of the two label values the larger becomes +1 (so 0/1, -1/+1 and 1/2 all work). `d` may
/// fix the dimension (for a test file that must match its training file), otherwise the largest
/// index is used.
///
/// # Errors
/// [`DataError::Io`], [`DataError::NotUtf8`]; [`DataError::Parse`] naming the line of a
/// malformed token, a value that is not a finite number, an index that is 0, repeated, not
/// increasing or above `d`, or a third label value; [`DataError::TooLarge`] when the dense
/// table (rows x the largest index) does not fit in memory.
pub fn read_libsvm(path: &Path, d: Option<usize>) -> Result<Tabular, DataError> {
    read_libsvm_as(path, d, Labels::Binary)
}

/// [`read_libsvm`] with the labels taken as `labels` says (real targets with
/// [`Labels::Targets`], as LIBSVM's regression sets hold them).
///
/// # Errors
/// As [`read_libsvm`]; with [`Labels::Targets`] the two-values check is not made.
pub fn read_libsvm_as(path: &Path, d: Option<usize>, labels: Labels) -> Result<Tabular, DataError> {
    let text = read_text(path)?;
    let mut t = parse_libsvm(&text, path, d, labels)?;
    t.name = stem(path, "libsvm");
    Ok(t)
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

    #[test]
    fn a_third_label_value_names_its_line() {
        let e = parse_delimited_at(
            "1,2,0\n3,4,1\n5,6,1\n7,8,2\n",
            Path::new("f.csv"),
            ',',
            LabelColumn::Last,
            Labels::Binary,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 4") && e.contains("more than two label values (0, 1, 2)"),
            "{e}"
        );
        let e = parse_libsvm(
            "0 1:1\n1 1:2\n\n2 1:3\n",
            Path::new("f.svm"),
            None,
            Labels::Binary,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 4") && e.contains("more than two label values"),
            "{e}"
        );
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("rankrisk-read-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn read_table_says_which_format_it_assumed_and_why() {
        let dir = scratch("table");
        let svm = dir.join("data.txt");
        std::fs::write(&svm, "# comment\n+1\n-1 2:1\n+1 1:0.5 3:1\n").unwrap();
        let (t, choice) = read_table(&svm, None, None, LabelColumn::Last, Labels::Binary).unwrap();
        assert_eq!((t.n(), t.d, t.name.as_str()), (3, 3, "data"));
        assert_eq!(choice.format, TableFormat::Libsvm);
        // Forced to CSV, it does not parse, and the error says how it was read.
        let err = read_table(
            &svm,
            Some(TableFormat::Csv),
            None,
            LabelColumn::Last,
            Labels::Binary,
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, DataError::Format { .. }), "{msg}");
        assert!(
            msg.contains("data.txt, line 2") && msg.contains("[read as CSV, as given]"),
            "{msg}"
        );
        let csv = dir.join("t.csv");
        std::fs::write(&csv, "+1 1:0.5\n").unwrap();
        let msg = read_table(&csv, None, None, LabelColumn::Last, Labels::Binary)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("[read as CSV: the file name ends in .csv]"),
            "{msg}"
        );
        // Not UTF-8: the file and the line, no Rust debug structure.
        std::fs::write(&csv, b"1,2,0\n3,\xe9,1\n").unwrap();
        let msg = read_csv(&csv, LabelColumn::Last).unwrap_err().to_string();
        assert!(msg.contains("t.csv, line 2: not UTF-8 text"), "{msg}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
