//! `rankrisk metrics`: ranking metrics with confidence intervals for score columns of a CSV
//! file, and paired comparisons of the columns.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use rankrisk::metrics::MetricError;
use rankrisk::metrics::bootstrap::{DRAW_SCHEME, bootstrap_threads, replicates};
use rankrisk::metrics::ci::{
    Bootstrap, Interval, PairedTest, compare_replicates, interval_of_replicates,
};
use rankrisk::metrics::ranked::{FigureSettings, RankedColumn};

use super::output::outln;
use super::scores_csv::read_table;

/// Arguments of `rankrisk metrics`.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// CSV file with a header row: a label column (+1/-1, or 1/0) and one or more score columns.
    pub input: PathBuf,
    /// The label column's name (default: `label`, else the first column).
    #[arg(long)]
    pub label: Option<String>,
    /// Our pAUC's FPR range start.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    pub alpha: f64,
    /// Our pAUC's FPR range end.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub beta: f64,
    /// Upper FPR of the McClish pAUC and of the two-way pAUC (default: beta).
    #[arg(long, allow_negative_numbers = true)]
    pub max_fpr: Option<f64>,
    /// Lower TPR of the two-way pAUC (LibAUC's convention).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub min_tpr: f64,
    /// Coverage of the intervals.
    #[arg(long, default_value_t = 0.95, allow_negative_numbers = true)]
    pub level: f64,
    /// Stratified bootstrap resamples for the pAUC intervals and the paired pAUC test; 0 skips
    /// the bootstrap (no pAUC intervals, no paired pAUC test).
    #[arg(long, default_value_t = 2000)]
    pub resamples: usize,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the figures as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// The figures of one score column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnReport {
    /// The column.
    pub column: String,
    /// Positives.
    pub positives: usize,
    /// Negatives.
    pub negatives: usize,
    /// AUC with DeLong's interval.
    pub auc: Interval,
    /// Our pAUC over `[alpha, beta]` with a stratified-bootstrap interval.
    pub pauc: Interval,
    /// McClish-standardized pAUC over `[0, max_fpr]` (scikit-learn's `max_fpr`).
    pub mcclish_pauc: f64,
    /// Two-way pAUC, TPR >= `min_tpr`, FPR <= `max_fpr`, in LibAUC's convention, with a
    /// stratified-bootstrap interval (the pAUC's resample count and seed).
    pub two_way_pauc: Interval,
}

/// A paired comparison of two columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairReport {
    /// First column.
    pub first: String,
    /// Second column.
    pub second: String,
    /// DeLong's test of the AUCs.
    pub auc: PairedTest,
    /// The paired stratified bootstrap of the pAUCs.
    pub pauc: PairedTest,
}

/// Everything `rankrisk metrics` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsReport {
    /// The file.
    pub input: PathBuf,
    /// Our pAUC's FPR range.
    pub fpr: (f64, f64),
    /// The McClish and two-way upper FPR.
    pub max_fpr: f64,
    /// The two-way lower TPR.
    pub min_tpr: f64,
    /// The bootstrap's settings.
    pub bootstrap: Bootstrap,
    /// The bootstrap's draws ([`DRAW_SCHEME`]), so that a saved report says which scheme
    /// made its intervals; None with `--resamples 0`.
    pub bootstrap_draws: Option<&'static str>,
    /// One entry per score column.
    pub columns: Vec<ColumnReport>,
    /// One entry per pair of score columns.
    pub pairs: Vec<PairReport>,
}

/// The flags checked before the file is read, each error naming the flag the user set.
fn check_flags(args: &MetricsArgs, max_fpr: f64) -> Result<(), String> {
    let (alpha, beta) = (args.alpha, args.beta);
    if !(alpha.is_finite() && beta.is_finite() && 0.0 <= alpha && alpha < beta && beta <= 1.0) {
        return Err(format!(
            "--alpha {alpha} --beta {beta}: our pAUC's FPR range needs 0 <= --alpha < --beta <= 1"
        ));
    }
    let flag = if args.max_fpr.is_some() {
        "--max-fpr"
    } else {
        "--max-fpr (default: --beta)"
    };
    if !(max_fpr > 0.0 && max_fpr <= 1.0) {
        return Err(format!(
            "{flag} {max_fpr}: the McClish and two-way pAUC's upper FPR needs 0 < --max-fpr <= 1"
        ));
    }
    if !(0.0..1.0).contains(&args.min_tpr) {
        return Err(format!(
            "--min-tpr {}: the two-way pAUC's lower TPR needs 0 <= --min-tpr < 1",
            args.min_tpr
        ));
    }
    if !(args.level > 0.0 && args.level < 1.0) {
        return Err(format!(
            "--level {}: the intervals' coverage needs 0 < --level < 1",
            args.level
        ));
    }
    if args.resamples == 1 {
        return Err(
            "--resamples 1: a bootstrap needs at least 2 resamples (0 skips it)".to_string(),
        );
    }
    Ok(())
}

/// An interval whose ends were not computed (the bootstrap skipped).
fn estimate_only(estimate: f64, level: f64) -> Interval {
    Interval {
        estimate,
        lower: f64::NAN,
        upper: f64::NAN,
        level,
    }
}

/// Compute every figure of the file. Each column is sorted once ([`RankedColumn`], `O(n log
/// n)`) and every figure read from it in one pass; the bootstrap draws its resamples once for
/// all columns and pairs and evaluates both pAUCs of each from the sorted columns by counts,
/// `O(B n)` ([`rankrisk::metrics::bootstrap`]); `--resamples 0` skips it.
///
/// # Errors
/// A message for a bad flag (naming it), an unreadable or malformed file, or one class only.
pub fn report(args: &MetricsArgs) -> Result<MetricsReport, String> {
    let max_fpr = args.max_fpr.unwrap_or(args.beta);
    check_flags(args, max_fpr)?;
    let (labels, columns) = read_table(&args.input, args.label.as_deref())?;
    // Every pair of columns is compared: a header of many columns is refused here, not by an
    // allocation that aborts.
    let count = columns.len() * (columns.len() - 1) / 2;
    let mut pairs = Vec::new();
    pairs.try_reserve_exact(count).map_err(|_| {
        let k = columns.len();
        format!(
            "{}: {k} score columns make {count} pairs: not enough memory to compare them",
            args.input.display()
        )
    })?;
    let boot = Bootstrap {
        resamples: args.resamples,
        seed: args.seed,
        level: args.level,
    };
    let m = |e: MetricError| format!("{}: {e}", args.input.display());
    let (alpha, beta) = (args.alpha, args.beta);
    let settings = FigureSettings {
        fpr: (alpha, beta),
        max_fpr,
        min_tpr: args.min_tpr,
    };
    let mut names = Vec::with_capacity(columns.len());
    let mut ranked = Vec::with_capacity(columns.len());
    for (name, scores) in columns {
        ranked.push(RankedColumn::new(&scores, &labels).map_err(m)?);
        names.push(name); // the scores themselves are no longer needed
    }
    let positives = labels.iter().filter(|&&y| y > 0.0).count();
    let negatives = labels.len() - positives;
    drop(labels);
    let mut reports = Vec::new();
    let mut estimates = Vec::new();
    for (name, column) in names.iter().zip(&ranked) {
        let f = column.figures(&settings).map_err(m)?;
        reports.push(ColumnReport {
            column: name.clone(),
            positives,
            negatives,
            auc: f.placements.delong.interval(args.level).map_err(m)?,
            pauc: estimate_only(f.pauc, args.level),
            mcclish_pauc: f.mcclish,
            two_way_pauc: estimate_only(f.two_way, args.level),
        });
        estimates.push(f.pauc);
    }
    // The bootstrap draws each resample along its first column's rank order. One bootstrap
    // of every column at once, along the file's first column, gives the paired tests (every
    // pair on the same resamples) and the first column's intervals; every other column's
    // intervals come from a bootstrap of that column alone (one pass per resample, which stops
    // early), so that a column's interval is the one it has alone and from Python, whatever
    // other columns the file holds.
    let mut joint = None;
    if args.resamples > 0 {
        let two_way = Some((args.min_tpr, max_fpr));
        let run = |columns: &[RankedColumn]| {
            replicates(columns, &boot, (alpha, beta), two_way, bootstrap_threads()).map_err(m)
        };
        let all = run(&ranked)?;
        for (c, r) in reports.iter_mut().enumerate() {
            let alone;
            let b = if c == 0 {
                &all
            } else {
                alone = run(&ranked[c..=c])?;
                &alone
            };
            r.pauc = interval_of_replicates(r.pauc.estimate, b.pauc[0].clone(), args.level)
                .map_err(m)?;
            r.two_way_pauc =
                interval_of_replicates(r.two_way_pauc.estimate, b.two_way[0].clone(), args.level)
                    .map_err(m)?;
        }
        joint = Some(all.pauc);
    }
    for a in 0..names.len() {
        for b in a + 1..names.len() {
            let difference = estimates[a] - estimates[b];
            pairs.push(PairReport {
                first: names[a].clone(),
                second: names[b].clone(),
                // By column a's tied groups and b's components: no column keeps its
                // components (ten columns of 10^7 rows would hold 800 MB of them).
                auc: ranked[a].delong_test(&ranked[b]).map_err(m)?,
                pauc: match &joint {
                    Some(r) => compare_replicates(difference, &r[a], &r[b]),
                    None => PairedTest {
                        difference,
                        std_error: f64::NAN,
                        z: f64::NAN,
                        p_value: f64::NAN,
                    },
                },
            });
        }
    }
    Ok(MetricsReport {
        input: args.input.clone(),
        fpr: (alpha, beta),
        max_fpr,
        min_tpr: args.min_tpr,
        bootstrap: boot,
        bootstrap_draws: (boot.resamples > 0).then_some(DRAW_SCHEME),
        columns: reports,
        pairs,
    })
}

/// `[lower, upper]` with 4 decimals.
/// The estimate alone when the bootstrap was skipped (`--resamples 0`).
fn interval(i: &Interval) -> String {
    if i.lower.is_nan() {
        format!("{:.4}", i.estimate)
    } else {
        format!("{:.4} [{:.4}, {:.4}]", i.estimate, i.lower, i.upper)
    }
}

/// Print the tables and write the JSON if asked.
///
/// # Errors
/// As [`report`]; an unwritable JSON file.
pub fn run(args: &MetricsArgs) -> Result<(), String> {
    if let Some(path) = &args.json {
        rankrisk::experiments::paths::check_output(path, "--json", &[args.input.as_path()])?;
    }
    let r = report(args)?;
    let pct = 100.0 * r.bootstrap.level;
    let (boot, boot_b) = if r.bootstrap.resamples == 0 {
        ("no bootstrap".to_string(), "no bootstrap".to_string())
    } else {
        (
            format!("{pct}% bootstrap"),
            format!("{pct}% bootstrap, B = {}", r.bootstrap.resamples),
        )
    };
    outln!(
        "| scores | N+ | N- | AUC ({pct}% DeLong) | pAUC[{}, {}] ({boot_b}) | McClish pAUC[0, {}] | two-way pAUC (TPR >= {}, FPR <= {}; {boot}) |",
        r.fpr.0,
        r.fpr.1,
        r.max_fpr,
        r.min_tpr,
        r.max_fpr
    )?;
    outln!("|---|---|---|---|---|---|---|")?;
    for c in &r.columns {
        outln!(
            "| {} | {} | {} | {} | {} | {:.4} | {} |",
            c.column,
            c.positives,
            c.negatives,
            interval(&c.auc),
            interval(&c.pauc),
            c.mcclish_pauc,
            interval(&c.two_way_pauc)
        )?;
    }
    if !r.pairs.is_empty() {
        outln!("\n| first - second | AUC difference | DeLong p | pAUC difference | bootstrap p |")?;
        outln!("|---|---|---|---|---|")?;
        for p in &r.pairs {
            let pauc = if p.pauc.std_error.is_nan() {
                format!("{:+.4} | - (--resamples 0)", p.pauc.difference)
            } else {
                format!(
                    "{:+.4} (se {:.4}) | {:.4}",
                    p.pauc.difference, p.pauc.std_error, p.pauc.p_value
                )
            };
            outln!(
                "| {} - {} | {:+.4} (se {:.4}) | {:.4} | {pauc} |",
                p.first,
                p.second,
                p.auc.difference,
                p.auc.std_error,
                p.auc.p_value,
            )?;
        }
    }
    if let Some(draws) = r.bootstrap_draws {
        outln!("\nBootstrap draws: {draws}, seed {}.", r.bootstrap.seed)?;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
