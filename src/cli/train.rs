//! `rankrisk train`: the trainings of the examples from a TOML or JSON config file.
//!
//! A config holds one run (a table with a `task` key) or several (`[[run]]` tables). A run's
//! keys are the flags of the matching example without the leading `--` (`data_dir` or
//! `data-dir`), so the config and the command line accept exactly the same settings and share
//! their defaults and checks; the CheXpert flag `--task` is the key `task_name`. `true` sets a
//! switch, an array is the comma list of a list flag (`positive = [3, 5]`). A list where a key
//! takes one value (`lr = [0.03, 0.1, 0.3]`) is a grid ([`super::grid`]): the run expands into
//! one run per point and the point with the best validation pAUC is reported. Tasks:
//! `long-tailed` (the `cifar_lt` example), `chexpert` (the `chexpert` example) and `tabular`
//! (the `tabular` example). The resolved config (every setting, defaults filled in, the
//! backend resolved) is printed before training and saved as `config.toml` in each image run's
//! output folder, where `rankrisk eval` finds it.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};
use serde::Serialize;
use serde_json::{Map, Value};

use super::grid::{self, GridPoint, GridRun};

use crate::cli::args::{ChexpertArgs, ImageArgs, LongTailedArgs, TabularArgs};
use crate::tasks::ImageTask;
use crate::tasks::report::{ResultRow, markdown};
use crate::train::run::{RunConfig, RunSummary};

/// The built-in default config (tabular sets, and Fashion-MNIST-LT when fetched).
pub const DEFAULT_CONFIG: &str = include_str!("default.toml");

/// Arguments of `rankrisk train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Config file (.toml, or .json); without it the built-in default runs: the tabular sets
    /// and, once `datasets/fetch-test-data.sh` has run, Fashion-MNIST-LT.
    pub config: Option<PathBuf>,
    /// Check every run (settings, FPR ranges, budgets, data folders and files), print the
    /// resolved config and stop.
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

/// One run of a config and, when it is a point of a grid, which grid and which point.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The run, resolved (a grid point's `out` is its own folder under the grid's).
    pub run: Run,
    /// The grid it belongs to, if any.
    pub grid: Option<GridMember>,
}

/// Where a planned run sits in its grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridMember {
    /// The config's run (0-based) the grid expands; the points of one grid are adjacent.
    pub group: usize,
    /// The grid's folder (the run's `out`), where `grid.md` and `grid.json` go.
    pub out: PathBuf,
    /// The point.
    pub point: GridPoint,
}

/// A resolved config: what `rankrisk train` prints and saves.
#[derive(Serialize)]
struct Resolved<'a> {
    run: &'a [Run],
}

/// Parse a config's text (`json` selects JSON, else TOML) into its runs, with every default
/// filled in, the backend resolved and every grid expanded (see [`parse_plan`]). `origin`
/// names the file in messages.
///
/// # Errors
/// A message naming the file, the run and the key for a syntax error, an unknown task or key,
/// or a value the flag does not accept.
pub fn parse_config(text: &str, json: bool, origin: &str) -> Result<Vec<Run>, String> {
    Ok(parse_plan(text, json, origin)?
        .into_iter()
        .map(|p| p.run)
        .collect())
}

/// Parse a config's text into its planned runs: one per run table, or one per point of a run
/// table's grid, each with every default filled in and the backend resolved.
///
/// # Errors
/// As [`parse_config`]; also a grid on a tabular run (it has no validation pAUC to choose by).
pub fn parse_plan(text: &str, json: bool, origin: &str) -> Result<Vec<Planned>, String> {
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
    let mut plan = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let at = format!("{origin}: run {}", i + 1);
        plan.extend(plan_table(t, i).map_err(|e| format!("{at}: {e}"))?);
    }
    Ok(plan)
}

/// The planned runs of one run table (`group` is its index in the config).
fn plan_table(table: &Value, group: usize) -> Result<Vec<Planned>, String> {
    let Value::Object(map) = table else {
        return Err("expected a table of settings".into());
    };
    let task = match map.get("task") {
        Some(Value::String(t)) => t.clone(),
        _ => return Err("no `task` key (long-tailed, chexpert or tabular)".into()),
    };
    let points = grid::expand(map, |key| takes_list(&task, key))?;
    let mut plan = Vec::new();
    for (table, point) in points {
        let mut run = OneRun::try_parse_from(to_argv(&task, &table)?)
            .map_err(|e| clap_message(&e))?
            .run;
        let grid = if point.is_empty() {
            None
        } else {
            let out = match &mut run {
                Run::LongTailed(a) => &mut a.out,
                Run::Chexpert(a) => &mut a.out,
                Run::Tabular(_) => {
                    return Err("a grid needs an image task (long-tailed or chexpert): a \
                                tabular run has no validation pAUC to choose by"
                        .into());
                }
            };
            let base = out.clone();
            *out = grid::folder(&base, &point);
            Some(GridMember {
                group,
                out: base,
                point,
            })
        };
        resolve(&mut run)?;
        plan.push(Planned { run, grid });
    }
    Ok(plan)
}

/// Whether `key` of a `task` run names a flag that takes a comma list (`positive`, `sets`).
fn takes_list(task: &str, key: &str) -> bool {
    let flag = flag_name(key);
    OneRun::command()
        .find_subcommand(task)
        .and_then(|sub| {
            sub.get_arguments()
                .find(|a| a.get_long() == Some(flag.as_str()))
                .map(|a| a.get_value_delimiter().is_some())
        })
        .unwrap_or(false)
}

/// The long flag (without `--`) of a config key.
fn flag_name(key: &str) -> String {
    match key {
        // The CheXpert task's `--task` flag: `task` names the kind of run here.
        "task_name" | "task-name" => "task".to_string(),
        k => k.replace('_', "-"),
    }
}

/// The command line equivalent to a run's table (grids expanded: one value per key).
fn to_argv(task: &str, map: &Map<String, Value>) -> Result<Vec<String>, String> {
    let mut argv = vec!["config".to_string(), task.to_string()];
    for (key, value) in map.iter().filter(|(k, _)| *k != "task") {
        let flag = format!("--{}", flag_name(key));
        let scalar = |v: &Value| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(format!(
                "`{key}`: expected a string or a number in the list"
            )),
        };
        // `--flag=value`, so that a value starting with `-` is read as the value (and a
        // negative budget is refused by the flag's own check).
        let pair = |v: String| format!("{flag}={v}");
        match value {
            Value::Bool(true) => argv.push(flag),
            Value::Bool(false) => {}
            Value::String(_) | Value::Number(_) => argv.push(pair(scalar(value)?)),
            Value::Array(items) if items.is_empty() => {}
            Value::Array(items) => {
                let parts: Result<Vec<String>, String> = items.iter().map(scalar).collect();
                argv.push(pair(parts?.join(",")));
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
    // Flags become key names (`--data-dir` -> `data_dir`), except inside `code spans` of a
    // value's own error (a command such as `cargo build --release --features cuda`).
    let mut code = false;
    joined
        .split(' ')
        .map(|w| {
            let before = code;
            code ^= w.matches('`').count() % 2 == 1;
            match w.find("--") {
                Some(at) if !before && !code => {
                    format!("{}{}", &w[..at], w[at + 2..].replace('-', "_"))
                }
                _ => w.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Fill in what the defaults leave open: the backend, the method's learning rate and its
/// gradient clamp (0: off).
fn resolve(run: &mut Run) -> Result<(), String> {
    let training = match run {
        Run::LongTailed(a) => &mut a.training,
        Run::Chexpert(a) => &mut a.training,
        Run::Tabular(_) => return Ok(()),
    };
    training.backend.backend = Some(training.backend.resolve().map_err(|e| e.to_string())?);
    let method_default = RunConfig::new(training.method, PathBuf::new());
    training.lr.get_or_insert(method_default.lr);
    training
        .grad_clip
        .get_or_insert(method_default.grad_clip.unwrap_or(0.0));
    training
        .run_config(Path::new(""))
        .validate()
        .map_err(|e| e.to_string())
}

/// Check what a run needs before it starts, beyond its settings: the data folders and files
/// it will read.
fn check_inputs(run: &Run) -> Result<(), String> {
    match run {
        Run::LongTailed(a) => a.validate().map_err(|e| e.to_string()),
        Run::Chexpert(a) => a.validate().map_err(|e| e.to_string()),
        Run::Tabular(_) => Ok(()),
    }
}

/// The runs as a config file (TOML) that `rankrisk train` reads back to the same runs.
///
/// # Errors
/// A message if a setting cannot be written as TOML.
pub fn to_toml(runs: &[Run]) -> Result<String, String> {
    toml::to_string(&Resolved { run: runs }).map_err(|e| e.to_string())
}

pub(crate) fn read_config(path: &Path) -> Result<Vec<Run>, String> {
    Ok(read_plan(path)?.into_iter().map(|p| p.run).collect())
}

fn read_plan(path: &Path) -> Result<Vec<Planned>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e}; expected a TOML or JSON config with a `task` key or \
                 [[run]] tables (docs/GUIDE.md, \"Training from a config\"; `rankrisk train` \
                 without a file runs the built-in default, `--dry-run` prints it)",
            path.display()
        )
    })?;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    parse_plan(&text, json, &path.display().to_string())
}

/// The built-in default's runs; the Fashion-MNIST-LT ones only when that data is fetched.
fn default_plan() -> Result<Vec<Planned>, String> {
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

/// Run every configured training and print the results table. A grid's points run one after
/// the other; after its last point the grid's table is printed and saved (`grid.md`,
/// `grid.json` in the grid's folder) and the results table gets the chosen point's row.
///
/// # Errors
/// The first run's error, with the run's number.
pub fn run(args: &TrainArgs) -> Result<(), String> {
    let plan = match &args.config {
        Some(path) => read_plan(path)?,
        None => default_plan()?,
    };
    let runs: Vec<Run> = plan.iter().map(|p| p.run.clone()).collect();
    for (i, run) in runs.iter().enumerate() {
        check_inputs(run).map_err(|e| format!("run {}: {e}", i + 1))?;
    }
    let resolved = to_toml(&runs)?;
    println!("# resolved config\n{resolved}");
    if args.dry_run {
        return Ok(());
    }
    let mut rows: Vec<ResultRow> = Vec::new();
    let mut points: Vec<GridRun> = Vec::new();
    for (i, planned) in plan.iter().enumerate() {
        let at = |e: String| format!("run {}: {e}", i + 1);
        let Some(member) = &planned.grid else {
            rows.extend(run_one(&planned.run).map_err(at)?);
            continue;
        };
        let summary = run_image(&planned.run).map_err(at)?;
        points.push(GridRun {
            point: member.point.clone(),
            summary,
        });
        let last = plan
            .get(i + 1)
            .and_then(|next| next.grid.as_ref())
            .is_none_or(|next| next.group != member.group);
        if last {
            let chosen = grid::select(&points);
            println!(
                "# grid in {} (chosen by validation pAUC)\n{}",
                member.out.display(),
                grid::markdown(&points, chosen)
            );
            grid::save(&member.out, &points, chosen).map_err(at)?;
            if let Some(c) = chosen {
                let mut r = row(data_label(&planned.run), &points[c].summary);
                r.method = format!("{} [{}]", r.method, grid::label(&points[c].point));
                rows.push(r);
            }
            points.clear();
        }
    }
    println!("{}", markdown(&rows));
    Ok(())
}

/// The data label of an image run's results row.
fn data_label(run: &Run) -> String {
    match run {
        Run::LongTailed(a) => a.task().label(),
        Run::Chexpert(a) => a.task().label(),
        Run::Tabular(_) => "tabular".into(),
    }
}

/// Train one image run (saving its resolved config first) and return its summary.
///
/// # Errors
/// As [`run_one`]; a tabular run is refused (it has no summary).
fn run_image(run: &Run) -> Result<RunSummary, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    match run {
        Run::LongTailed(a) => {
            save_config(&a.out, run)?;
            a.run().map_err(|e| err(&e))
        }
        Run::Chexpert(a) => {
            save_config(&a.out, run)?;
            a.run().map_err(|e| err(&e))
        }
        Run::Tabular(_) => Err("a tabular run has no image summary".into()),
    }
}

/// Train one run and return its results rows (one per model). An image run first saves its
/// resolved config as `config.toml` in its output folder; the examples run through here too.
///
/// # Errors
/// A message for an unwritable output folder, missing data, a bad setting or a refused batch.
pub fn run_one(run: &Run) -> Result<Vec<ResultRow>, String> {
    match run {
        Run::Tabular(a) => a.task().run().map_err(|e| e.to_string()),
        image => Ok(vec![row(data_label(image), &run_image(image)?)]),
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

fn row(data: String, s: &RunSummary) -> ResultRow {
    ResultRow {
        data,
        method: format!("{} (epoch {})", s.config.method.name(), s.best.epoch),
        test_auc: s.best.test_auc,
        test_pauc: s.best.test_pauc,
        test_auc_ci: s.best.test_auc_ci,
        test_pauc_ci: s.best.test_pauc_ci,
        fpr: (s.config.alpha, s.config.beta),
        test_accuracy: None,
        seconds: s.history.last().map_or(0.0, |h| h.seconds),
    }
}
