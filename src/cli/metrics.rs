//! `rankrisk metrics`: ranking metrics with confidence intervals for score columns of a CSV
//! file, and paired comparisons of the columns.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::metrics::MetricError;
use crate::metrics::auc::pauc;
use crate::metrics::ci::{
    Bootstrap, DeLong, Interval, PairedTest, bootstrap_compare, bootstrap_interval,
};
use crate::metrics::conventions::{libauc_two_way_pauc, mcclish_pauc};

/// Arguments of `rankrisk metrics`.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// CSV file with a header row: a label column (+1/-1, or 1/0) and one or more score columns.
    pub input: PathBuf,
    /// The label column's name (default: `label`, else the first column).
    #[arg(long)]
    pub label: Option<String>,
    /// Our pAUC's FPR range start.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Our pAUC's FPR range end.
    #[arg(long, default_value_t = 0.5)]
    pub beta: f64,
    /// Upper FPR of the McClish pAUC and of the two-way pAUC (default: beta).
    #[arg(long)]
    pub max_fpr: Option<f64>,
    /// Lower TPR of the two-way pAUC (LibAUC's convention).
    #[arg(long, default_value_t = 0.5)]
    pub min_tpr: f64,
    /// Coverage of the intervals.
    #[arg(long, default_value_t = 0.95)]
    pub level: f64,
    /// Stratified bootstrap resamples for the pAUC interval and the paired pAUC test.
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
    /// Two-way pAUC, TPR >= `min_tpr`, FPR <= `max_fpr`, in LibAUC's convention.
    pub two_way_pauc: f64,
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
    /// One entry per score column.
    pub columns: Vec<ColumnReport>,
    /// One entry per pair of score columns.
    pub pairs: Vec<PairReport>,
}

/// Labels (+1/-1) and the named score columns of a CSV file.
type Table = (Vec<f64>, Vec<(String, Vec<f64>)>);

fn read_table(args: &MetricsArgs) -> Result<Table, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", args.input.display());
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(&args.input)
        .map_err(|e| {
            format!(
                "{}: {e}; expected a CSV file with a header row, a label column (+1/-1 or 1/0) \
                 and one or more score columns, as every image run writes it (scores_test.csv \
                 in its output folder)",
                args.input.display()
            )
        })?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| at(&e))?
        .iter()
        .map(str::to_string)
        .collect();
    let label_at = match &args.label {
        Some(name) => header.iter().position(|h| h == name).ok_or_else(|| {
            at(&format!(
                "no column '{name}' (columns: {})",
                header.join(", ")
            ))
        })?,
        None => header.iter().position(|h| h == "label").unwrap_or(0),
    };
    if header.len() < 2 {
        return Err(at(
            &"a label column and at least one score column are needed",
        ));
    }
    let mut labels = Vec::new();
    let mut columns: Vec<(String, Vec<f64>)> = header
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != label_at)
        .map(|(_, h)| (h.clone(), Vec::new()))
        .collect();
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|e| at(&e))?;
        let line = row + 2;
        if record.len() != header.len() {
            return Err(at(&format!(
                "line {line}: {} fields for {} columns",
                record.len(),
                header.len()
            )));
        }
        let number = |k: usize| -> Result<f64, String> {
            let v: f64 = record[k]
                .parse()
                .map_err(|_| at(&format!("line {line}: '{}' is not a number", &record[k])))?;
            if v.is_finite() {
                Ok(v)
            } else {
                Err(at(&format!("line {line}: {} is not finite", &record[k])))
            }
        };
        let y = number(label_at)?;
        labels.push(if y == 1.0 {
            1.0
        } else if y == 0.0 || y == -1.0 {
            -1.0
        } else {
            return Err(at(&format!(
                "line {line}: label {y} (expected +1/-1 or 1/0)"
            )));
        });
        for (c, k) in (0..header.len()).filter(|&k| k != label_at).enumerate() {
            columns[c].1.push(number(k)?);
        }
    }
    Ok((labels, columns))
}

/// Compute every figure of the file.
///
/// # Errors
/// A message for an unreadable or malformed file, one class only, or a bad range or level.
pub fn report(args: &MetricsArgs) -> Result<MetricsReport, String> {
    let (labels, columns) = read_table(args)?;
    let max_fpr = args.max_fpr.unwrap_or(args.beta);
    let boot = Bootstrap {
        resamples: args.resamples,
        seed: args.seed,
        level: args.level,
    };
    let m = |e: MetricError| format!("{}: {e}", args.input.display());
    let (alpha, beta) = (args.alpha, args.beta);
    let pauc_stat = |s: &[f64], y: &[f64]| pauc(s, y, alpha, beta);
    let mut reports = Vec::new();
    let mut delongs = Vec::new();
    for (name, scores) in &columns {
        let d = DeLong::new(scores, &labels).map_err(m)?;
        reports.push(ColumnReport {
            column: name.clone(),
            positives: labels.iter().filter(|&&y| y > 0.0).count(),
            negatives: labels.iter().filter(|&&y| y <= 0.0).count(),
            auc: d.interval(args.level).map_err(m)?,
            pauc: bootstrap_interval(scores, &labels, &boot, pauc_stat).map_err(m)?,
            mcclish_pauc: mcclish_pauc(scores, &labels, max_fpr).map_err(m)?,
            two_way_pauc: libauc_two_way_pauc(scores, &labels, args.min_tpr, max_fpr).map_err(m)?,
        });
        delongs.push(d);
    }
    let mut pairs = Vec::new();
    for a in 0..columns.len() {
        for b in a + 1..columns.len() {
            pairs.push(PairReport {
                first: columns[a].0.clone(),
                second: columns[b].0.clone(),
                auc: delongs[a].compare(&delongs[b]).map_err(m)?,
                pauc: bootstrap_compare(&columns[a].1, &columns[b].1, &labels, &boot, pauc_stat)
                    .map_err(m)?,
            });
        }
    }
    Ok(MetricsReport {
        input: args.input.clone(),
        fpr: (alpha, beta),
        max_fpr,
        min_tpr: args.min_tpr,
        bootstrap: boot,
        columns: reports,
        pairs,
    })
}

/// `[lower, upper]` with 4 decimals.
fn interval(i: &Interval) -> String {
    format!("{:.4} [{:.4}, {:.4}]", i.estimate, i.lower, i.upper)
}

/// Print the tables and write the JSON if asked.
///
/// # Errors
/// As [`report`]; an unwritable JSON file.
pub fn run(args: &MetricsArgs) -> Result<(), String> {
    let r = report(args)?;
    let pct = 100.0 * r.bootstrap.level;
    println!(
        "| scores | N+ | N- | AUC ({pct}% DeLong) | pAUC[{}, {}] ({pct}% bootstrap, B = {}) | McClish pAUC[0, {}] | two-way pAUC (TPR >= {}, FPR <= {}) |",
        r.fpr.0, r.fpr.1, r.bootstrap.resamples, r.max_fpr, r.min_tpr, r.max_fpr
    );
    println!("|---|---|---|---|---|---|---|");
    for c in &r.columns {
        println!(
            "| {} | {} | {} | {} | {} | {:.4} | {:.4} |",
            c.column,
            c.positives,
            c.negatives,
            interval(&c.auc),
            interval(&c.pauc),
            c.mcclish_pauc,
            c.two_way_pauc
        );
    }
    if !r.pairs.is_empty() {
        println!(
            "\n| first - second | AUC difference | DeLong p | pAUC difference | bootstrap p |"
        );
        println!("|---|---|---|---|---|");
        for p in &r.pairs {
            println!(
                "| {} - {} | {:+.4} (se {:.4}) | {:.4} | {:+.4} (se {:.4}) | {:.4} |",
                p.first,
                p.second,
                p.auc.difference,
                p.auc.std_error,
                p.auc.p_value,
                p.pauc.difference,
                p.pauc.std_error,
                p.pauc.p_value
            );
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
