//! The data of the linear fitting commands (`fit-linear`, `fit-pauc`, `fit-pauc-dca`): a
//! built-in set with the rank-based paper's preprocessing and split, or CSV / TSV / LIBSVM files
//! with binary labels or real targets. The format of a file is the one `--format` gives, else
//! the one its extension names, else the one its first data line shows
//! (`rankrisk_datasets::guess_format`); an error of a file that does not parse says which
//! format was assumed and why.

use crate::experiments::ExperimentError;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use rankrisk_datasets::{DataError, LabelColumn, Labels, TableFormat, Tabular, load_builtin};

/// The layout of `--train-file` and `--test-file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum FileFormat {
    /// By the extension (`.csv`; `.tsv`, `.tab`; `.svm`, `.libsvm`, `.svmlight`), else by the
    /// first line that is not blank, a `#` comment or a lone value.
    #[default]
    Auto,
    /// Comma-separated numbers, the label in the last column, an optional header line.
    Csv,
    /// Tab-separated numbers, as CSV.
    Tsv,
    /// LIBSVM / SVMlight: `label index:value ...`, indices from 1, increasing.
    Libsvm,
}

impl FileFormat {
    fn forced(self) -> Option<TableFormat> {
        match self {
            FileFormat::Auto => None,
            FileFormat::Csv => Some(TableFormat::Csv),
            FileFormat::Tsv => Some(TableFormat::Tsv),
            FileFormat::Libsvm => Some(TableFormat::Libsvm),
        }
    }
}

/// The data options shared by the linear fitting commands.
#[derive(Debug, Clone, Default, Args)]
pub struct DataArgs {
    /// Built-in data set (australian, phoneme, titanic, monks-3, splice, utkface, or
    /// synthetic:n=..,d=..,informative=..,seed=..): standardized and split with --seed as in
    /// the rank-based paper (60/40; 50/25/25 for AoRR).
    #[arg(long, conflicts_with = "train_file")]
    pub data: Option<String>,
    /// Training file (CSV or TSV with the label in the last column, or LIBSVM), used as it is.
    #[arg(long)]
    pub train_file: Option<PathBuf>,
    /// Test file in the same format.
    #[arg(long, requires = "train_file")]
    pub test_file: Option<PathBuf>,
    /// Format of the files: auto (by the extension, else by the first data line), csv, tsv or
    /// libsvm.
    #[arg(long, value_enum, default_value_t = FileFormat::Auto)]
    pub format: FileFormat,
    /// Standardize file data (statistics of the training file, applied to both).
    #[arg(long)]
    pub standardize: bool,
    /// Append a constant feature (an intercept; it is regularized like the other weights).
    /// The rank-based paper's problem (1) has none; its reference AoRR runs add one.
    #[arg(long)]
    pub intercept: bool,
}

impl DataArgs {
    /// The files the options read (the training and test files).
    pub fn files(&self) -> Vec<&Path> {
        [&self.train_file, &self.test_file]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path)
            .collect()
    }

    /// A built-in set by name.
    pub fn builtin(name: &str) -> Self {
        DataArgs {
            data: Some(name.to_string()),
            ..DataArgs::default()
        }
    }
}

/// The (train, test) parts of a binary task: a built-in set standardized and split with
/// `fractions` (the last part is the test set; a middle one, the validation part of 50/25/25,
/// is left out), or the files as given.
///
/// # Errors
/// Unknown set, unreadable file, malformed rows, one-class training data.
pub fn load_parts(
    args: &DataArgs,
    fractions: &[f64],
    seed: u64,
) -> Result<(Tabular, Option<Tabular>), ExperimentError> {
    load_parts_as(args, fractions, seed, Labels::Binary)
}

/// [`load_parts`] with the files' labels taken as `labels` says: real targets for the
/// regression losses ([`Labels::Targets`]; a built-in set keeps its -1/+1 labels as targets).
///
/// # Errors
/// As [`load_parts`]; a table of targets is not checked for two classes.
pub fn load_parts_as(
    args: &DataArgs,
    fractions: &[f64],
    seed: u64,
    labels: Labels,
) -> Result<(Tabular, Option<Tabular>), ExperimentError> {
    let (train, test) = match (&args.data, &args.train_file) {
        (Some(name), None) => {
            let mut all = load_builtin(name)?;
            all.standardize();
            let mut parts = all.split(fractions, seed)?;
            let test = parts.pop();
            (parts.swap_remove(0), test)
        }
        (None, Some(path)) => {
            let mut train = read_table(path, None, labels, args.format)?;
            let mut test = match &args.test_file {
                Some(p) => {
                    let test = read_table(p, Some(train.d), labels, args.format)?;
                    if test.d != train.d {
                        return Err(ExperimentError::Data(format!(
                            "test data has {} features, training data {} ({} vs {})",
                            test.d,
                            train.d,
                            p.display(),
                            path.display()
                        )));
                    }
                    Some(match labels {
                        Labels::Binary => with_training_labels(test, p, path, args.format)?,
                        Labels::Targets => test,
                    })
                }
                None => None,
            };
            if args.standardize {
                // The training file's statistics, applied to both.
                let scaling = train.column_scaling();
                train.rescale(&scaling);
                if let Some(t) = test.as_mut() {
                    t.rescale(&scaling);
                }
            }
            (train, test)
        }
        _ => {
            return Err(ExperimentError::Data(
                "give either --data NAME or --train-file FILE".into(),
            ));
        }
    };
    let (train, test) = if args.intercept {
        (train.with_intercept(), test.map(Tabular::with_intercept))
    } else {
        (train, test)
    };
    if !train.targets {
        train.require_both_classes()?;
    }
    Ok((train, test))
}

/// Read a data file in `format` (or the one it shows), naming the format assumed and why when
/// it does not parse.
/// `test` (read from `test_path`) with its labels mapped as the training file's are: each
/// reader maps its own file's larger label value to +1, so a test file with values 1 and 2
/// beside a training file with 0 and 1 (or a test file of one value) would be labelled against
/// the training file's meaning. The test file's values must be among the training file's.
///
/// # Errors
/// A message naming both files and the first test label the training file does not have.
fn with_training_labels(
    mut test: Tabular,
    test_path: &Path,
    train_path: &Path,
    format: FileFormat,
) -> Result<Tabular, ExperimentError> {
    let raw = |p: &Path| read_table(p, None, Labels::Targets, format).map(|t| t.y);
    let (train_values, test_values) = (raw(train_path)?, raw(test_path)?);
    let mut distinct: Vec<f64> = Vec::new();
    for &v in &train_values {
        if !distinct.contains(&v) {
            distinct.push(v);
        }
    }
    distinct.sort_by(f64::total_cmp);
    let positive = distinct.last().copied().unwrap_or(f64::NAN);
    for (row, &v) in test_values.iter().enumerate() {
        if !distinct.contains(&v) {
            return Err(ExperimentError::Data(format!(
                "{}: the label {v} of row {row} (rows counted from 0) is not one of the \
                 training file's label values ({}) in {}; both files must use the same two values",
                test_path.display(),
                distinct
                    .iter()
                    .map(f64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                train_path.display()
            )));
        }
    }
    test.y = test_values
        .iter()
        .map(|&v| if v == positive { 1.0 } else { -1.0 })
        .collect();
    Ok(test)
}

fn read_table(
    path: &Path,
    d: Option<usize>,
    labels: Labels,
    format: FileFormat,
) -> Result<Tabular, ExperimentError> {
    match rankrisk_datasets::read_table(path, format.forced(), d, LabelColumn::Last, labels) {
        Ok((table, _)) => Ok(table),
        Err(e @ DataError::Io { .. }) => Err(ExperimentError::Data(format!(
            "{e}; expected a CSV file (a header row, one row per sample, the label in the last \
             column) or a LIBSVM file (`label index:value ...`), such as the LIBSVM sets at \
             https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
        ))),
        Err(e @ DataError::Format { .. }) if format == FileFormat::Auto => {
            Err(ExperimentError::Data(format!(
                "{e}; --format csv|tsv|libsvm reads the file in another format"
            )))
        }
        Err(e) => Err(e.into()),
    }
}
