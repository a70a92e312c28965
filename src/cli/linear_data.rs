//! The data of the linear fitting commands (`fit-linear`, `fit-pauc`, `fit-pauc-dca`): a
//! built-in set with the rank-based paper's preprocessing and split, or CSV / LIBSVM files with
//! binary labels or real targets.

use std::path::{Path, PathBuf};

use clap::Args;
use rankrisk_datasets::{
    DataError, LabelColumn, Labels, Tabular, load_builtin, read_csv_as, read_libsvm_as,
};

/// The data options shared by the linear fitting commands.
#[derive(Debug, Clone, Default, Args)]
pub struct DataArgs {
    /// Built-in data set (australian, phoneme, titanic, monks-3, splice, utkface, or
    /// synthetic:n=..,d=..,informative=..,seed=..): standardized and split with --seed as in
    /// the rank-based paper (60/40; 50/25/25 for AoRR).
    #[arg(long, conflicts_with = "train_file")]
    pub data: Option<String>,
    /// Training file (CSV with the label in the last column, or LIBSVM), used as it is.
    #[arg(long)]
    pub train_file: Option<PathBuf>,
    /// Test file in the same format.
    #[arg(long, requires = "train_file")]
    pub test_file: Option<PathBuf>,
    /// Standardize file data (statistics of the training file, applied to both).
    #[arg(long)]
    pub standardize: bool,
    /// Append a constant feature (an intercept; it is regularized like the other weights).
    /// The rank-based paper's problem (1) has none; its reference AoRR runs add one.
    #[arg(long)]
    pub intercept: bool,
}

impl DataArgs {
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
) -> Result<(Tabular, Option<Tabular>), String> {
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
) -> Result<(Tabular, Option<Tabular>), String> {
    let err = |e: DataError| e.to_string();
    let (train, test) = match (&args.data, &args.train_file) {
        (Some(name), None) => {
            let mut all = load_builtin(name).map_err(err)?;
            all.standardize();
            let mut parts = all.split(fractions, seed).map_err(err)?;
            let test = parts.pop();
            (parts.swap_remove(0), test)
        }
        (None, Some(path)) => {
            let mut train = read_table(path, None, labels)?;
            let mut test = match &args.test_file {
                Some(p) => {
                    let test = read_table(p, Some(train.d), labels)?;
                    if test.d != train.d {
                        return Err(format!(
                            "test data has {} features, training data {} ({} vs {})",
                            test.d,
                            train.d,
                            p.display(),
                            path.display()
                        ));
                    }
                    Some(test)
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
        _ => return Err("give either --data NAME or --train-file FILE".into()),
    };
    let (train, test) = if args.intercept {
        (train.with_intercept(), test.map(Tabular::with_intercept))
    } else {
        (train, test)
    };
    if !train.targets {
        train.require_both_classes().map_err(err)?;
    }
    Ok((train, test))
}

fn read_table(path: &Path, d: Option<usize>, labels: Labels) -> Result<Tabular, String> {
    let head = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e}; expected a CSV file (a header row, one row per sample, the \
                 label in the last column) or a LIBSVM file (`label index:value ...`), such as \
                 the LIBSVM sets at https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/",
            path.display()
        )
    })?;
    let first = head.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let table = if first.contains(':') {
        read_libsvm_as(path, d, labels)
    } else {
        read_csv_as(path, LabelColumn::Last, labels)
    };
    table.map_err(|e| e.to_string())
}
