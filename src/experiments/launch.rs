//! One run of a config as `rankrisk train` and the `cifar_lt` / `chexpert` examples train it:
//! its inputs checked, its output folder locked, a resumed run compared with the config its
//! folder holds, the resolved config saved as `config.toml` (where `rankrisk eval` finds it),
//! the training and its results rows; and the built-in default config.

use std::io::Write as _;
use std::path::Path;

use super::ExperimentError;
use super::plan::{Planned, Run, parse_plan, read_config, resolve, to_toml};
use crate::experiments::args::ImageArgs;
use crate::tasks::ImageTask;
use crate::tasks::report::{ResultRow, TwoWayFigure, markdown};
use crate::train::checkpoint::RunLock;
use crate::train::run::{RunSummary, resume};

/// The built-in default config (tabular sets, and Fashion-MNIST-LT when fetched).
pub const DEFAULT_CONFIG: &str = include_str!("default.toml");

/// Check what a run needs before it starts besides its settings, which [`parse_plan`] checked
/// when it read them: an image run's data folders and files and that its output folder can
/// be written; a tabular run's settings and data set names. The same for `--dry-run` and a
/// real run (whose [`ImageTask::run`] checks the settings once more, the library's guard for
/// callers that build a [`RunConfig`](crate::train::run::RunConfig) themselves).
///
/// # Errors
/// [`ExperimentError::Task`] naming the setting, folder or file; an output folder that cannot
/// be written.
pub fn check_inputs(run: &Run) -> Result<(), ExperimentError> {
    match run {
        Run::LongTailed(a) => {
            a.task().validate()?;
            super::paths::check_folder(&a.out, "out")
        }
        Run::Chexpert(a) => {
            a.task().validate()?;
            super::paths::check_folder(&a.out, "out")
        }
        Run::Tabular(a) => Ok(a.task().validate()?),
    }
}

/// The built-in default's runs; the Fashion-MNIST-LT ones only when that data is fetched.
pub fn default_plan() -> Result<Vec<Planned>, ExperimentError> {
    let mut plan = parse_plan(DEFAULT_CONFIG, false, "built-in default")?;
    if rankrisk_datasets::fetched::item("fashion-mnist").is_none() {
        eprintln!(
            "note: Fashion-MNIST is not fetched (bash datasets/fetch-test-data.sh), so the \
             default runs the tabular sets only"
        );
        plan.retain(|p| !matches!(p.run, Run::LongTailed(_)));
    }
    Ok(plan)
}

/// The data label of an image run's results row.
pub fn data_label(run: &Run) -> String {
    match run {
        Run::LongTailed(a) => a.task().label(),
        Run::Chexpert(a) => a.task().label(),
        Run::Tabular(_) => "tabular".into(),
    }
}

/// Train one image run and return its summary: lock its output folder, check a resumed run
/// against the config its folder holds, save the resolved config, train.
///
/// # Errors
/// As [`run_one`]; a tabular run is refused (it has no summary).
pub fn run_image(run: &Run) -> Result<RunSummary, ExperimentError> {
    let (out, resume) = match run {
        Run::LongTailed(a) => (&a.out, a.training.resume),
        Run::Chexpert(a) => (&a.out, a.training.resume),
        Run::Tabular(_) => {
            return Err(ExperimentError::Output(
                "a tabular run has no image summary".into(),
            ));
        }
    };
    // Before anything is written: a second run on a folder in use must not replace the
    // config.toml the first one trains (and `rankrisk eval` scores) by.
    let _lock = RunLock::acquire(out).map_err(|e| ExperimentError::Output(e.to_string()))?;
    if resume {
        check_resumed_config(out, run)?;
    }
    save_config(out, run)?;
    match run {
        Run::LongTailed(a) => Ok(a.run()?),
        Run::Chexpert(a) => Ok(a.run()?),
        Run::Tabular(_) => Err(ExperimentError::Output(
            "a tabular run has no image summary".into(),
        )),
    }
}

/// Refuse to resume `run` in `out` when the config saved there (by the run that wrote the
/// checkpoint) differs in a setting that changes the computation: the data set, its folder,
/// the classes, the limits, the method and its settings ([`resume::FREE_ON_RESUME`] lists
/// what may differ). A folder without a saved config is left to the run driver's check of
/// the checkpoint.
fn check_resumed_config(out: &Path, run: &Run) -> Result<(), ExperimentError> {
    let path = out.join("config.toml");
    if !path.is_file() {
        return Ok(());
    }
    let saved = read_config(&path)?;
    let [saved] = saved.as_slice() else {
        return Err(ExperimentError::Output(format!(
            "{}: expected the one run of the output folder, found {}",
            path.display(),
            saved.len()
        )));
    };
    let mut now = run.clone();
    resolve(&mut now)?;
    let diffs = resume::differences(saved, &now, &resume::FREE_ON_RESUME);
    if diffs.is_empty() {
        return Ok(());
    }
    Err(ExperimentError::Output(format!(
        "cannot resume the run in {}: it was started with other settings ({}; saved in {}); \
         resume with the same settings, or start a new run in another output folder",
        out.display(),
        diffs.join("; "),
        path.display()
    )))
}

/// Train one run and return its results rows (one per model). An image run first saves its
/// resolved config as `config.toml` in its output folder; the examples run through here too.
///
/// # Errors
/// A message for an unwritable output folder, missing data, a bad setting or a refused batch.
pub fn run_one(run: &Run) -> Result<Vec<ResultRow>, ExperimentError> {
    match run {
        Run::Tabular(a) => Ok(a.task().run()?),
        image => Ok(vec![row(data_label(image), &run_image(image)?)]),
    }
}

/// The `main` of the cifar_lt and chexpert examples: [`run_one`], then the results table and
/// where the artifacts are; an error is one line on standard error and exit status 2.
pub fn run_example(run: Run) -> std::process::ExitCode {
    // Before the data's and Rayon's threads allocate (glibc's arena limit holds only then).
    rankrisk_models::kernels::memory::reuse_freed_memory();
    let out = match &run {
        Run::LongTailed(a) => Some(a.out.clone()),
        Run::Chexpert(a) => Some(a.out.clone()),
        Run::Tabular(_) => None,
    };
    // The folder first, named as the example's flag (`--out`): a file there is refused here,
    // not by the run lock inside it.
    let checked = match &out {
        Some(out) => super::paths::check_folder(out, "--out"),
        None => Ok(()),
    };
    let result = checked.and_then(|()| run_one(&run)).and_then(|rows| {
        let table = markdown(&rows);
        let mut stdout = std::io::stdout().lock();
        let mut text = table.strip_suffix('\n').unwrap_or(&table).to_string();
        if let Some(out) = out {
            text.push_str(&format!("\nartifacts in {}", out.display()));
        }
        writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .map_err(|e| ExperimentError::Output(format!("cannot write the results: {e}")))
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// Write `run` (resolved) as `config.toml` into its output folder `out`, where `rankrisk eval`
/// reads it.
fn save_config(out: &Path, run: &Run) -> Result<(), ExperimentError> {
    let err =
        |e: &dyn std::fmt::Display| ExperimentError::Output(format!("{}: {e}", out.display()));
    std::fs::create_dir_all(out).map_err(|e| err(&e))?;
    let mut run = run.clone();
    resolve(&mut run)?;
    let text = to_toml(&[run])?;
    std::fs::write(out.join("config.toml"), text).map_err(|e| err(&e))
}

/// The results row of an image run's summary: its best point's figures.
pub fn row(data: String, s: &RunSummary) -> ResultRow {
    ResultRow {
        data,
        method: match s.config.recipe.eval_every {
            // Evaluation points every `eval_every` steps: the point's passes, not its number.
            Some(_) => format!(
                "{} (pass {:.2})",
                s.config.method.name(),
                s.best.epochs_seen
            ),
            None => format!("{} (epoch {})", s.config.method.name(), s.best.epoch),
        },
        test_auc: s.best.test_auc,
        test_pauc: s.best.test_pauc,
        test_auc_ci: s.best.test_auc_ci,
        test_pauc_ci: s.best.test_pauc_ci,
        test_pauc_ci_draws: s.best.test_pauc_ci_draws.clone(),
        fpr: (s.config.alpha, s.config.beta),
        test_accuracy: None,
        seconds: s.history.last().map_or(0.0, |h| h.seconds),
        test_two_way: s.best.test_two_way.map(|value| TwoWayFigure {
            value,
            tpr_min: s.config.tpr_min,
            fpr_max: s.config.fpr_max,
        }),
    }
}
