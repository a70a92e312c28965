//! `rankrisk train`'s config files: a TOML or JSON file's runs, each the flags of the matching
//! example written as keys, with grids expanded ([`super::grid`]), every default filled in
//! and the backend resolved; and the resolved runs written back as TOML (what a run's folder
//! keeps as `config.toml`). [`super::launch`] runs them.
//!
//! A config holds one run (a table with a `task` key) or several (`[[run]]` tables). A run's
//! keys are the flags of the matching example without the leading `--` (`data_dir` or
//! `data-dir`), so the config and the command line accept exactly the same settings and share
//! their defaults and checks; the CheXpert flag `--task` is the key `task_name`. `true` sets a
//! switch, an array is the comma list of a list flag (`positive = [3, 5]`). A list where a key
//! takes one value (`lr = [0.03, 0.1, 0.3]`) is a grid: the run expands into one run per point.

use crate::experiments::ExperimentError;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand};
use serde::Serialize;
use serde_json::{Map, Value};

use super::folders;
use super::grid::{self, GridPoint};

use crate::experiments::args::{ChexpertArgs, LongTailedArgs, TabularArgs};
use crate::train::run::config::KEYS_WITH_CHANGED_DEFAULTS;

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
    /// The config's run (0-based) it comes from: messages name it as `run {table + 1}`.
    pub table: usize,
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
pub fn parse_config(text: &str, json: bool, origin: &str) -> Result<Vec<Run>, ExperimentError> {
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
pub fn parse_plan(text: &str, json: bool, origin: &str) -> Result<Vec<Planned>, ExperimentError> {
    let value: Value = if json {
        serde_json::from_str(text).map_err(|e| ExperimentError::Config(format!("{origin}: {e}")))?
    } else {
        toml_value(parse_toml(text, origin)?, origin)?
    };
    plan_value(value, origin)
}

/// A config's TOML text as a table, naming `origin` in a syntax error.
fn parse_toml(text: &str, origin: &str) -> Result<toml::Table, ExperimentError> {
    toml::from_str(text).map_err(|e| ExperimentError::Config(format!("{origin}: {e}")))
}

/// A parsed TOML config as the JSON value [`plan_value`] reads, refusing `nan` and `inf`.
fn toml_value(t: toml::Table, origin: &str) -> Result<Value, ExperimentError> {
    let bad = |e: &dyn std::fmt::Display| ExperimentError::Config(format!("{origin}: {e}"));
    refuse_non_finite(&t).map_err(|e| bad(&e))?;
    serde_json::to_value(t).map_err(|e| bad(&e))
}

/// The planned runs of a parsed config (see [`parse_plan`]).
fn plan_value(value: Value, origin: &str) -> Result<Vec<Planned>, ExperimentError> {
    let Value::Object(top) = value else {
        return Err(ExperimentError::Config(format!(
            "{origin}: expected a table of settings"
        )));
    };
    let tables: Vec<Value> = match (top.get("run"), top.contains_key("task")) {
        (Some(Value::Array(runs)), false) if top.len() == 1 => runs.clone(),
        (None, true) => vec![Value::Object(top)],
        _ => {
            return Err(ExperimentError::Config(format!(
                "{origin}: expected either one run (a `task` key and its settings) or only \
                 `[[run]]` tables"
            )));
        }
    };
    if tables.is_empty() {
        return Err(ExperimentError::Config(format!("{origin}: no runs")));
    }
    let mut plan = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let at = format!("{origin}: run {}", i + 1);
        let room = grid::MAX_POINTS - plan.len();
        plan.extend(
            plan_table(t, i, room).map_err(|e| ExperimentError::Config(format!("{at}: {e}")))?,
        );
    }
    let labels: Vec<Option<String>> = plan
        .iter()
        .map(|p| p.grid.as_ref().map(|m| grid::label(&m.point)))
        .collect();
    let outputs: Vec<folders::Output<'_>> = plan
        .iter()
        .zip(&labels)
        .filter_map(|(p, label)| {
            let out = match &p.run {
                Run::LongTailed(a) => &a.out,
                Run::Chexpert(a) => &a.out,
                Run::Tabular(_) => return None,
            };
            let grid = p.grid.as_ref().zip(label.clone());
            Some(folders::Output {
                out,
                table: p.table,
                grid: grid.map(|(m, l)| (m.group, m.out.as_path(), l)),
            })
        })
        .collect();
    folders::check_distinct(&outputs)
        .map_err(|e| ExperimentError::Config(format!("{origin}: {e}")))?;
    Ok(plan)
}

/// Refuse a `nan` or `inf` in a TOML config (JSON has none), naming the run and the key: no
/// setting takes a non-finite number, and JSON, through which a config is read, cannot hold
/// one.
fn refuse_non_finite(top: &toml::Table) -> Result<(), ExperimentError> {
    fn first(v: &toml::Value) -> Option<f64> {
        match v {
            toml::Value::Float(f) if !f.is_finite() => Some(*f),
            toml::Value::Array(items) => items.iter().find_map(first),
            toml::Value::Table(t) => t.values().find_map(first),
            _ => None,
        }
    }
    let check = |run: usize, table: &toml::Table| -> Result<(), ExperimentError> {
        for (key, value) in table {
            if let Some(f) = first(value) {
                let shown = if f.is_nan() {
                    "nan"
                } else if f > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                return Err(ExperimentError::Config(format!(
                    "run {run}: {key}: the value {shown} is not finite (every setting takes a \
                     finite number)"
                )));
            }
        }
        Ok(())
    };
    match top.get("run") {
        Some(toml::Value::Array(runs)) => {
            for (i, r) in runs.iter().enumerate() {
                if let toml::Value::Table(t) = r {
                    check(i + 1, t)?;
                }
            }
            Ok(())
        }
        _ => check(1, top),
    }
}

/// The planned runs of one run table (`group` is its index in the config).
fn plan_table(table: &Value, group: usize, room: usize) -> Result<Vec<Planned>, ExperimentError> {
    let Value::Object(map) = table else {
        return Err(ExperimentError::Config(
            "expected a table of settings".into(),
        ));
    };
    let task = match map.get("task") {
        Some(Value::String(t)) => t.clone(),
        _ => {
            return Err(ExperimentError::Config(
                "no `task` key (long-tailed, chexpert or tabular)".into(),
            ));
        }
    };
    let points = grid::expand(map, |key| takes_list(&task, key), room)?;
    let mut plan = Vec::new();
    for (table, point) in points {
        let mut run = OneRun::try_parse_from(to_argv(&task, &table)?)
            .map_err(|e| ExperimentError::Config(clap_message(&e)))?
            .run;
        let grid = if point.is_empty() {
            None
        } else {
            let out = match &mut run {
                Run::LongTailed(a) => &mut a.out,
                Run::Chexpert(a) => &mut a.out,
                Run::Tabular(_) => {
                    return Err(ExperimentError::Config(
                        "a grid needs an image task (long-tailed or chexpert): a tabular run \
                         has no validation pAUC to choose by"
                            .into(),
                    ));
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
        plan.push(Planned {
            run,
            table: group,
            grid,
        });
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
fn to_argv(task: &str, map: &Map<String, Value>) -> Result<Vec<String>, ExperimentError> {
    let mut argv = vec!["config".to_string(), task.to_string()];
    for (key, value) in map.iter().filter(|(k, _)| *k != "task") {
        let flag = format!("--{}", flag_name(key));
        let scalar = |v: &Value| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(ExperimentError::Config(format!(
                "`{key}`: expected a string or a number in the list"
            ))),
        };
        // `--flag=value`, so that a value starting with `-` is read as the value (and a
        // negative budget is refused by the flag's own check).
        let pair = |v: String| format!("{flag}={v}");
        match value {
            Value::Bool(true) => argv.push(flag),
            Value::Bool(false) => {}
            Value::String(_) | Value::Number(_) => argv.push(pair(scalar(value)?)),
            // An empty list would silently mean the default (`positive = []` is class 3).
            Value::Array(items) if items.is_empty() => {
                return Err(ExperimentError::Config(format!(
                    "`{key}`: an empty list; leave the key out for its default"
                )));
            }
            Value::Array(items) => {
                let parts: Result<Vec<String>, ExperimentError> =
                    items.iter().map(scalar).collect();
                argv.push(pair(parts?.join(",")));
            }
            Value::Null => {
                return Err(ExperimentError::Config(format!(
                    "`{key}`: null is not a value (leave the key out for its default)"
                )));
            }
            Value::Object(_) => {
                return Err(ExperimentError::Config(format!(
                    "`{key}`: expected a value, found a table"
                )));
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
pub fn resolve(run: &mut Run) -> Result<(), ExperimentError> {
    let training = match run {
        Run::LongTailed(a) => &mut a.training,
        Run::Chexpert(a) => &mut a.training,
        Run::Tabular(_) => return Ok(()),
    };
    // Named as what set it: the `backend` key (the flag), or the variable, whose errors name
    // it themselves.
    let from_key = training.backend.backend.is_some();
    training.backend.backend = Some(training.backend.resolve().map_err(|e| {
        ExperimentError::Config(if from_key {
            format!("backend: {e}")
        } else {
            e.to_string()
        })
    })?);
    *training = training.clone().resolved();
    // Every run of a config is checked before the first one trains.
    Ok(training.validate()?)
}

/// The runs as a config file (TOML) that `rankrisk train` reads back to the same runs.
///
/// # Errors
/// A message if a setting cannot be written as TOML.
pub fn to_toml(runs: &[Run]) -> Result<String, ExperimentError> {
    toml::to_string(&Resolved { run: runs }).map_err(|e| ExperimentError::Config(e.to_string()))
}

/// The runs of a run folder's saved `config.toml` (for `eval` and `--resume`). Folders saved
/// before 2026-11-25 hold an unset list as `[]` (`positive = []`, `devices = []`), which
/// meant the default when they were written: those keys are read as left out, where a
/// config a user writes is refused for them. A run saved before a key whose default changed
/// existed is read as it ran (`RunConfig::as_saved_before_keys`), so that its resume with
/// today's defaults is refused as a changed setting.
pub fn read_config(path: &Path) -> Result<Vec<Run>, ExperimentError> {
    let origin = path.display().to_string();
    let mut top = parse_toml(&read_config_text(path)?, &origin)?;
    // Per run table, in order: the keys with changed defaults it lacks.
    let mut absent: Vec<Vec<&str>> = Vec::new();
    let mut as_written = |t: &mut toml::Table| {
        t.retain(|_, v| !matches!(v, toml::Value::Array(a) if a.is_empty()));
        absent.push(
            KEYS_WITH_CHANGED_DEFAULTS
                .into_iter()
                .filter(|k| !t.contains_key(*k))
                .collect(),
        );
    };
    match top.get_mut("run") {
        Some(toml::Value::Array(runs)) => {
            for r in runs.iter_mut() {
                if let toml::Value::Table(t) = r {
                    as_written(t);
                }
            }
        }
        _ => as_written(&mut top),
    }
    let plan = plan_value(toml_value(top, &origin)?, &origin)?;
    let mut runs: Vec<Run> = plan.into_iter().map(|p| p.run).collect();
    if runs.len() == absent.len() {
        for (run, absent) in runs.iter_mut().zip(&absent) {
            if let Run::LongTailed(LongTailedArgs { training, .. })
            | Run::Chexpert(ChexpertArgs { training, .. }) = run
            {
                training.as_saved_before_keys(|key| absent.contains(&key));
            }
        }
    }
    Ok(runs)
}

/// The planned runs of config file `path` (TOML, or JSON by its extension), as
/// [`parse_plan`] gives them.
///
/// # Errors
/// As [`parse_plan`]; a file that cannot be read.
pub fn read_plan(path: &Path) -> Result<Vec<Planned>, ExperimentError> {
    let text = read_config_text(path)?;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    parse_plan(&text, json, &path.display().to_string())
}

/// The text of a config file, naming the file and what it should hold when it cannot be read.
fn read_config_text(path: &Path) -> Result<String, ExperimentError> {
    rankrisk_datasets::read_text(path).map_err(|e| match e {
        rankrisk_datasets::DataError::Io { source: e, .. } => ExperimentError::Config(format!(
            "cannot read {}: {e}; expected a TOML or JSON config with a `task` key or \
                 [[run]] tables (docs/GUIDE.md, \"Training from a config\"; `rankrisk train` \
                 without a file runs the built-in default, `--dry-run` prints it)",
            path.display()
        )),
        other => other.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run folder saved before empty lists were refused still reads (its `[]` meant the
    /// default), while a config a user writes with `positive = []` is refused.
    #[test]
    fn saved_empty_lists_read_as_defaults_but_user_configs_refuse_them() {
        let dir = std::env::temp_dir().join(format!("rankrisk-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        std::fs::write(
            &path,
            "[[run]]\ntask = \"long-tailed\"\npositive = []\ndevices = []\nepochs = 3\n",
        )
        .unwrap();
        let runs = read_config(&path).unwrap();
        let [Run::LongTailed(a)] = runs.as_slice() else {
            panic!("expected one long-tailed run: {runs:?}");
        };
        assert!(a.positive.is_empty() && a.training.devices.is_empty());
        assert_eq!(a.training.epochs, 3);
        let e = read_plan(&path).map(|_| ()).unwrap_err();
        assert!(
            e.to_string().contains("an empty list; leave the key out"),
            "{e}"
        );
        // The resolved form leaves the unset lists out, so it reads back either way.
        let text = to_toml(&runs).unwrap();
        assert!(
            !text.contains("positive") && !text.contains("devices"),
            "{text}"
        );
        assert!(parse_plan(&text, false, "resolved").is_ok());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A run folder saved before the keys whose defaults changed existed reads as it ran;
    /// one saved with them reads as written, and a config a user writes without them takes
    /// today's defaults.
    #[test]
    fn a_saved_run_without_the_changed_keys_reads_as_it_ran() {
        use crate::train::instance_pauc::{GammaStep, WeightStep};
        let dir = std::env::temp_dir().join(format!("rankrisk-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        let saved = |text: &str| {
            std::fs::write(&path, text).unwrap();
            let runs = read_config(&path).unwrap();
            let [Run::LongTailed(a)] = runs.as_slice() else {
                panic!("expected one long-tailed run: {runs:?}");
            };
            (a.training.gamma_step, a.training.weight_step)
        };
        let run = |m: &str| format!("[[run]]\ntask = \"long-tailed\"\nmethod = \"{m}\"\n");
        let (d, x) = (GammaStep::Descent, WeightStep::Exact);
        assert_eq!(saved(&run("pauci")), (GammaStep::Ascent, x));
        assert_eq!(saved(&run("upauci")), (d, WeightStep::Paper));
        assert_eq!(saved(&run("ce")), (d, x));
        assert_eq!(
            saved(&format!("{}gamma_step = \"descent\"\n", run("pauci"))),
            (d, x)
        );
        assert_eq!(
            saved(&format!("{}weight_step = \"exact\"\n", run("upauci"))),
            (d, x)
        );
        // The same text as a user's config: no key is today's default.
        std::fs::write(&path, run("pauci")).unwrap();
        let planned = read_plan(&path).unwrap();
        let [
            Planned {
                run: Run::LongTailed(a),
                ..
            },
        ] = planned.as_slice()
        else {
            panic!("expected one long-tailed run");
        };
        assert_eq!(a.training.gamma_step, d);
        std::fs::remove_dir_all(&dir).ok();
    }
}
