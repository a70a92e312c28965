//! `rankrisk train`: the trainings of the examples from a TOML or JSON config file.
//!
//! A config holds one run (a table with a `task` key) or several (`[[run]]` tables). A run's
//! keys are the flags of the matching example without the leading `--` (`data_dir` or
//! `data-dir`), so the config and the command line accept exactly the same settings and share
//! their defaults and checks; the CheXpert flag `--task` is the key `task_name`. `true` sets a switch, arrays are comma lists. Tasks:
//! `long-tailed` (the `cifar_lt` example), `chexpert` (the `chexpert` example) and `tabular`
//! (the `tabular` example). The resolved config (every setting, defaults filled in, the
//! backend resolved) is printed before training and saved as `config.toml` in each image run's
//! output folder, where `rankrisk eval` finds it.

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use serde_json::Value;

use crate::train::image::RunConfig;
use crate::train::report::{ResultRow, markdown};
use crate::train::tabular::{TabularArgs, run_tabular};
use crate::train::tasks::{ChexpertArgs, LongTailedArgs, run_chexpert, run_long_tailed};

/// The built-in default config (tabular sets, and Fashion-MNIST-LT when fetched).
pub const DEFAULT_CONFIG: &str = include_str!("default.toml");

/// Arguments of `rankrisk train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Config file (.toml, or .json); without it the built-in default runs: the tabular sets
    /// and, once `datasets/fetch-test-data.sh` has run, Fashion-MNIST-LT.
    pub config: Option<PathBuf>,
    /// Print the resolved config and stop.
    #[arg(long)]
    pub dry_run: bool,
}

/// One run of a config: the task and its settings.
#[derive(Debug, Clone, PartialEq, Subcommand, Serialize)]
#[serde(tag = "task", rename_all = "kebab-case")]
pub enum Run {
    /// ResNet-20 on a long-tailed binary image task.
    LongTailed(LongTailedArgs),
    /// DenseNet121 on a CheXpert task.
    Chexpert(ChexpertArgs),
    /// The linear solvers on the vendored tabular sets.
    Tabular(TabularArgs),
}

#[derive(Parser)]
#[command(name = "config")]
struct OneRun {
    #[command(subcommand)]
    run: Run,
}

/// A resolved config: what `rankrisk train` prints and saves.
#[derive(Serialize)]
struct Resolved<'a> {
    run: &'a [Run],
}

/// Parse a config's text (`json` selects JSON, else TOML) into its runs, with every default
/// filled in and the backend resolved. `origin` names the file in messages.
///
/// # Errors
/// A message naming the file, the run and the key for a syntax error, an unknown task or key,
/// or a value the flag does not accept.
pub fn parse_config(text: &str, json: bool, origin: &str) -> Result<Vec<Run>, String> {
    let value: Value = if json {
        serde_json::from_str(text).map_err(|e| format!("{origin}: {e}"))?
    } else {
        let t: toml::Table = toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        serde_json::to_value(t).map_err(|e| format!("{origin}: {e}"))?
    };
    let Value::Object(top) = value else {
        return Err(format!("{origin}: expected a table of settings"));
    };
    let tables: Vec<Value> = match (top.get("run"), top.contains_key("task")) {
        (Some(Value::Array(runs)), false) if top.len() == 1 => runs.clone(),
        (None, true) => vec![Value::Object(top)],
        _ => {
            return Err(format!(
                "{origin}: expected either one run (a `task` key and its settings) or only \
                 `[[run]]` tables"
            ));
        }
    };
    if tables.is_empty() {
        return Err(format!("{origin}: no runs"));
    }
    tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("{origin}: run {}", i + 1);
            let argv = to_argv(t).map_err(|e| format!("{at}: {e}"))?;
            let mut run = OneRun::try_parse_from(&argv)
                .map_err(|e| format!("{at}: {}", clap_message(&e)))?
                .run;
            resolve(&mut run).map_err(|e| format!("{at}: {e}"))?;
            Ok(run)
        })
        .collect()
}

/// The command line equivalent to a run's table.
fn to_argv(table: &Value) -> Result<Vec<String>, String> {
    let Value::Object(map) = table else {
        return Err("expected a table of settings".into());
    };
    let task = match map.get("task") {
        Some(Value::String(t)) => t.clone(),
        _ => return Err("no `task` key (long-tailed, chexpert or tabular)".into()),
    };
    let mut argv = vec!["config".to_string(), task];
    for (key, value) in map.iter().filter(|(k, _)| *k != "task") {
        // The CheXpert task's `--task` flag: `task` names the kind of run here.
        let flag = match key.as_str() {
            "task_name" | "task-name" => "--task".to_string(),
            k => format!("--{}", k.replace('_', "-")),
        };
        let scalar = |v: &Value| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(format!(
                "`{key}`: expected a string or a number in the list"
            )),
        };
        match value {
            Value::Bool(true) => argv.push(flag),
            Value::Bool(false) => {}
            Value::String(_) | Value::Number(_) => argv.extend([flag, scalar(value)?]),
            Value::Array(items) if items.is_empty() => {}
            Value::Array(items) => {
                let parts: Result<Vec<String>, String> = items.iter().map(scalar).collect();
                argv.extend([flag, parts?.join(",")]);
            }
            Value::Null | Value::Object(_) => {
                return Err(format!("`{key}`: expected a value, found a table"));
            }
        }
    }
    Ok(argv)
}

/// Clap's message (up to its first blank line) on one line, with flags written as config
/// keys (`--data-dir <DATA_DIR>` -> `data_dir`).
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let head: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let mut joined = head.join(" ");
    // Drop value placeholders (` <EPOCHS>`).
    while let Some(at) = joined.find(" <") {
        let Some(len) = joined[at..].find('>') else {
            break;
        };
        joined.replace_range(at..at + len + 1, "");
    }
    let joined = joined.strip_prefix("error: ").unwrap_or(&joined);
    let joined = joined
        .replace("unexpected argument", "unknown key")
        .replace("unrecognized subcommand", "unknown task")
        .replace(
            "the following required arguments were not provided:",
            "missing required key:",
        );
    joined
        .split(' ')
        .map(|w| match w.find("--") {
            Some(at) => format!("{}{}", &w[..at], w[at + 2..].replace('-', "_")),
            None => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Fill in what the defaults leave open: the backend and the method's learning rate.
fn resolve(run: &mut Run) -> Result<(), String> {
    let training = match run {
        Run::LongTailed(a) => &mut a.training,
        Run::Chexpert(a) => &mut a.training,
        Run::Tabular(_) => return Ok(()),
    };
    training.backend.backend = Some(training.backend.resolve()?);
    let method_default = RunConfig::new(training.method, PathBuf::new()).lr;
    training.lr.get_or_insert(method_default);
    Ok(())
}

/// The runs as a config file (TOML) that `rankrisk train` reads back to the same runs.
///
/// # Errors
/// A message if a setting cannot be written as TOML.
pub fn to_toml(runs: &[Run]) -> Result<String, String> {
    toml::to_string(&Resolved { run: runs }).map_err(|e| e.to_string())
}

pub(crate) fn read_config(path: &Path) -> Result<Vec<Run>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    parse_config(&text, json, &path.display().to_string())
}

/// The built-in default's runs; the Fashion-MNIST-LT ones only when that data is fetched.
fn default_runs() -> Result<Vec<Run>, String> {
    let mut runs = parse_config(DEFAULT_CONFIG, false, "built-in default")?;
    if rankrisk_datasets::fetched::item("fashion-mnist").is_none() {
        eprintln!(
            "note: Fashion-MNIST is not fetched (bash datasets/fetch-test-data.sh), so the \
             default runs the tabular sets only"
        );
        runs.retain(|r| !matches!(r, Run::LongTailed(_)));
    }
    Ok(runs)
}

/// Run every configured training and print the results table.
///
/// # Errors
/// The first run's error, with the run's number.
pub fn run(args: &TrainArgs) -> Result<(), String> {
    let runs = match &args.config {
        Some(path) => read_config(path)?,
        None => default_runs()?,
    };
    let resolved = to_toml(&runs)?;
    println!("# resolved config\n{resolved}");
    if args.dry_run {
        return Ok(());
    }
    let mut rows: Vec<ResultRow> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        rows.extend(run_one(run).map_err(|e| format!("run {}: {e}", i + 1))?);
    }
    println!("{}", markdown(&rows));
    Ok(())
}

/// Train one run and return its results rows (one per model). An image run first saves its
/// resolved config as `config.toml` in its output folder; the examples run through here too.
///
/// # Errors
/// A message for an unwritable output folder, missing data, a bad setting or a refused batch.
pub fn run_one(run: &Run) -> Result<Vec<ResultRow>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    match run {
        Run::Tabular(a) => run_tabular(a).map_err(|e| err(&e)),
        Run::LongTailed(a) => {
            save_config(&a.out, run)?;
            let s = run_long_tailed(a).map_err(|e| err(&e))?;
            Ok(vec![row(a.label(), &s)])
        }
        Run::Chexpert(a) => {
            save_config(&a.out, run)?;
            let s = run_chexpert(a).map_err(|e| err(&e))?;
            Ok(vec![row(a.label(), &s)])
        }
    }
}

/// The `main` of the cifar_lt and chexpert examples: [`run_one`], then the results table and
/// where the artifacts are; an error is one line on standard error and exit status 2.
pub fn run_example(run: Run) -> std::process::ExitCode {
    let out = match &run {
        Run::LongTailed(a) => Some(a.out.clone()),
        Run::Chexpert(a) => Some(a.out.clone()),
        Run::Tabular(_) => None,
    };
    match run_one(&run) {
        Ok(rows) => {
            print!("{}", markdown(&rows));
            if let Some(out) = out {
                println!("artifacts in {}", out.display());
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// Write `run` (resolved) as `config.toml` into its output folder `out`, where `rankrisk eval`
/// reads it.
fn save_config(out: &Path, run: &Run) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    std::fs::create_dir_all(out).map_err(|e| err(&e))?;
    let mut run = run.clone();
    resolve(&mut run)?;
    let text = to_toml(&[run])?;
    std::fs::write(out.join("config.toml"), text).map_err(|e| err(&e))
}

fn row(data: String, s: &crate::train::image::RunSummary) -> ResultRow {
    ResultRow {
        data,
        method: format!("{} (epoch {})", s.config.method.name(), s.best.epoch),
        test_auc: s.best.test_auc,
        test_pauc: s.best.test_pauc,
        fpr: (s.config.alpha, s.config.beta),
        test_accuracy: None,
        seconds: s.history.last().map_or(0.0, |h| h.seconds),
    }
}
