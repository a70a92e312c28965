//! `rankrisk train`: the trainings of the examples from a TOML or JSON config file (read by
//! `rankrisk::experiments::plan`), or the built-in default. The resolved config (every setting,
//! defaults filled in, the backend resolved) is printed before training and saved as
//! `config.toml` in each image run's output folder, where `rankrisk eval` finds it and where
//! `--resume` checks that the run continues with the same settings. A grid's points run one
//! after the other and the point with the best validation pAUC is reported.

use std::path::PathBuf;

use clap::Args;
use rankrisk::experiments::grid::{self, GridRun};
use rankrisk::experiments::launch::{
    check_inputs, data_label, default_plan, row, run_image, run_one,
};
use rankrisk::experiments::plan::{Run, read_plan, to_toml};
use rankrisk::tasks::report::{ResultRow, markdown};

use super::output::outln;

/// Arguments of `rankrisk train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Config file (.toml, or .json); without it the built-in default runs: the tabular sets
    /// and, once `datasets/fetch-test-data.sh` has run, Fashion-MNIST-LT.
    pub config: Option<PathBuf>,
    /// Check every run as the real run checks it (settings, FPR ranges, budgets, positive
    /// classes, data set names, data folders and files, output folders), print the resolved
    /// config and stop.
    #[arg(long)]
    pub dry_run: bool,
}

/// Run every configured training and print the results table. A grid's points run one after
/// the other; after its last point the grid's table is printed and saved (`grid.md`,
/// `grid.json` in the grid's folder) and the results table gets the chosen point's row.
///
/// # Errors
/// The first run's error, with the run's number.
pub fn run(args: &TrainArgs) -> Result<(), String> {
    let (plan, origin) = match &args.config {
        Some(path) => (read_plan(path)?, path.display().to_string()),
        None => (default_plan()?, "built-in default".to_string()),
    };
    let runs: Vec<Run> = plan.iter().map(|p| p.run.clone()).collect();
    for p in &plan {
        check_inputs(&p.run).map_err(|e| format!("{origin}: run {}: {e}", p.table + 1))?;
    }
    let resolved = to_toml(&runs)?;
    outln!("# resolved config\n{resolved}")?;
    if args.dry_run {
        return Ok(());
    }
    let mut rows: Vec<ResultRow> = Vec::new();
    let mut points: Vec<GridRun> = Vec::new();
    for (i, planned) in plan.iter().enumerate() {
        let at = |e: rankrisk::experiments::ExperimentError| match &planned.grid {
            Some(m) => format!(
                "{origin}: run {} (grid point {}): {e}",
                planned.table + 1,
                grid::label(&m.point)
            ),
            None => format!("{origin}: run {}: {e}", planned.table + 1),
        };
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
            outln!(
                "# grid in {} (chosen by validation pAUC)\n{}",
                member.out.display(),
                grid::markdown(&points, chosen)
            )?;
            grid::save(&member.out, &points, chosen).map_err(at)?;
            if let Some(c) = chosen {
                let mut r = row(data_label(&planned.run), &points[c].summary);
                r.method = format!("{} [{}]", r.method, grid::label(&points[c].point));
                rows.push(r);
            }
            points.clear();
        }
    }
    outln!("{}", markdown(&rows))?;
    Ok(())
}
