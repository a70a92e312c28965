//! `rankrisk metrics`: ranking metrics with confidence intervals for score columns of a CSV
//! file, and paired comparisons of the columns.

use std::io::{BufRead, Read};
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use rankrisk::metrics::MetricError;
use rankrisk::metrics::auc::pauc;
use rankrisk::metrics::bootstrap::pauc_replicates;
use rankrisk::metrics::ci::{
    Bootstrap, DeLong, Interval, PairedTest, bootstrap_interval, compare_replicates,
    interval_of_replicates,
};
use rankrisk::metrics::conventions::{libauc_two_way_pauc, mcclish_pauc};

use super::output::outln;

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
    /// One entry per score column.
    pub columns: Vec<ColumnReport>,
    /// One entry per pair of score columns.
    pub pairs: Vec<PairReport>,
}

/// Labels (+1/-1) and the named score columns of a CSV file.
type Table = (Vec<f64>, Vec<(String, Vec<f64>)>);

/// The longest line the reader takes, in bytes (a file without line breaks is refused, not held
/// in memory).
const MAX_LINE: u64 = 1 << 24;

/// The next line into `buf` without its line end (`\n` or `\r\n`); false at the end of the file.
///
/// # Errors
/// A line longer than [`MAX_LINE`], or the reading error.
fn next_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> Result<bool, String> {
    buf.clear();
    let read = reader.by_ref().take(MAX_LINE + 1).read_until(b'\n', buf);
    let read = read.map_err(|e| e.to_string())? as u64;
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    } else if read > MAX_LINE {
        return Err(format!("longer than {MAX_LINE} bytes"));
    }
    Ok(read > 0)
}

/// The fields of one CSV line, reused from line to line: separated by commas, trimmed of spaces
/// and tabs; a field in double quotes may hold commas, and `""` for a quote.
#[derive(Default)]
struct Fields {
    text: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl Fields {
    /// Split `line`.
    ///
    /// # Errors
    /// The field (1-based) with an unclosed quote or text after its closing quote.
    fn split(&mut self, line: &[u8]) -> Result<(), String> {
        let blank = |c: &u8| *c == b' ' || *c == b'\t';
        self.text.clear();
        self.spans.clear();
        let mut i = 0;
        loop {
            while line.get(i).is_some_and(blank) {
                i += 1;
            }
            let (start, field) = (self.text.len(), self.spans.len() + 1);
            if line.get(i) == Some(&b'"') {
                i += 1;
                loop {
                    match (line.get(i), line.get(i + 1)) {
                        (None, _) => return Err(format!("column {field}: no closing quote")),
                        (Some(b'"'), Some(b'"')) => i += 1, // "" is one quote
                        (Some(b'"'), _) => break,
                        _ => {}
                    }
                    self.text.push(line[i]);
                    i += 1;
                }
                i += 1;
                while line.get(i).is_some_and(blank) {
                    i += 1;
                }
                if i < line.len() && line[i] != b',' {
                    return Err(format!("column {field}: text after the closing quote"));
                }
            } else {
                let end = line[i..]
                    .iter()
                    .position(|&c| c == b',')
                    .map_or(line.len(), |p| i + p);
                let text = &line[i..end];
                let kept = text.iter().rposition(|c| !blank(c)).map_or(0, |p| p + 1);
                self.text.extend_from_slice(&text[..kept]);
                i = end;
            }
            self.spans.push((start, self.text.len()));
            if i >= line.len() {
                return Ok(());
            }
            i += 1; // the comma
        }
    }

    /// Field `k` (0-based) as text, or a message naming it (1-based) when it is not UTF-8.
    fn get(&self, k: usize) -> Result<&str, String> {
        let (a, b) = self.spans[k];
        std::str::from_utf8(&self.text[a..b])
            .map_err(|_| format!("column {}: not UTF-8 text", k + 1))
    }
}

/// Reads the scores CSV: the first line is the header (and only it); every other line is a row
/// of exactly the header's fields, a label (+1/-1 or 1/0, one convention per file) and finite
/// scores (a blank line holds no row and is passed over; lines are counted as the file has
/// them). Nothing else is skipped: a field that is not a number, a non-finite score,
/// another label or a row of another length is an error naming the file, the line and the
/// field. Memory is reserved fallibly and lines are bounded, so a huge file ends in an error,
/// never an abort.
fn read_table(args: &MetricsArgs) -> Result<Table, String> {
    let file = args.input.display();
    let expected = "expected a CSV file with a header row, a label column (+1/-1 or 1/0) and one \
                    or more score columns, as every image run writes it (scores_test.csv in its \
                    output folder)";
    let at = |line: usize, e: String| format!("{file}, line {line}: {e}");
    let handle =
        std::fs::File::open(&args.input).map_err(|e| format!("{file}: {e}; {expected}"))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, handle);
    let (mut buf, mut fields) = (Vec::new(), Fields::default());
    if !next_line(&mut reader, &mut buf).map_err(|e| at(1, e))? {
        return Err(format!("{file}: the file is empty; {expected}"));
    }
    let head = buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&buf); // a UTF-8 byte order mark
    if head.iter().all(u8::is_ascii_whitespace) {
        return Err(at(
            1,
            format!("empty, but the header belongs there; {expected}"),
        ));
    }
    fields.split(head).map_err(|e| at(1, e))?;
    let header = (0..fields.spans.len())
        .map(|k| fields.get(k).map(str::to_string))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| at(1, e))?;
    if header.iter().all(|h| h.parse::<f64>().is_ok()) {
        // Read as a header, this line's numbers would be a row lost without a word.
        return Err(at(
            1,
            format!(
                "holds only numbers ({}), but the first line is the header that names the \
                 columns; {expected}",
                header.join(",")
            ),
        ));
    }
    if header.len() < 2 {
        return Err(at(1, format!("the header has 1 column; {expected}")));
    }
    let label_at = match &args.label {
        Some(name) => header.iter().position(|h| h == name).ok_or_else(|| {
            at(
                1,
                format!("no column '{name}' (columns: {})", header.join(", ")),
            )
        })?,
        None => header.iter().position(|h| h == "label").unwrap_or(0),
    };
    let name = |k: usize| format!("column {} ('{}')", k + 1, header[k]);
    let mut labels: Vec<f64> = Vec::new();
    let mut columns: Vec<(String, Vec<f64>)> = header
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != label_at)
        .map(|(_, h)| (h.clone(), Vec::new()))
        .collect();
    // The first line with label 0 and the first with label -1: a file holds only one of them.
    let mut first: [Option<usize>; 2] = [None, None];
    let mut line = 1;
    while next_line(&mut reader, &mut buf).map_err(|e| at(line + 1, e))? {
        line += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            // A blank line holds no row (as in the tabular readers); it still counts as a line.
            continue;
        }
        fields.split(&buf).map_err(|e| at(line, e))?;
        let (got, want) = (fields.spans.len(), header.len());
        if got != want {
            let what = if got < want {
                format!("{} is missing", name(got))
            } else {
                match fields.get(want) {
                    Ok(t) => format!("column {} ('{t}') is one too many", want + 1),
                    Err(e) => e,
                }
            };
            let e = format!("{got} columns where the header (line 1) has {want}: {what}");
            return Err(at(line, e));
        }
        let text = |k: usize| fields.get(k).map_err(|e| at(line, e));
        let label = text(label_at)?;
        let y = match label.parse::<f64>() {
            Ok(1.0) => 1.0,
            Ok(v) if v == 0.0 || v == -1.0 => {
                first[usize::from(v == -1.0)].get_or_insert(line);
                -1.0
            }
            _ => {
                let e = format!("{}: label '{label}' is not +1/-1 or 1/0", name(label_at));
                return Err(at(line, e));
            }
        };
        if let [Some(zero), Some(minus)] = first {
            let (other, on) = if zero < minus {
                ("0", zero)
            } else {
                ("-1", minus)
            };
            let e = format!(
                "{}: label '{label}', but line {on} has label '{other}': the labels are +1/-1 \
                 or 1/0, not both",
                name(label_at)
            );
            return Err(at(line, e));
        }
        let full = |_| at(line, "not enough memory to hold the table".to_string());
        labels.try_reserve(1).map_err(full)?;
        labels.push(y);
        for (c, k) in (0..header.len()).filter(|&k| k != label_at).enumerate() {
            let t = text(k)?;
            let v: f64 = match t.parse() {
                Ok(v) if f64::is_finite(v) => v,
                Ok(_) => return Err(at(line, format!("{}: score '{t}' is not finite", name(k)))),
                Err(_) if t.is_empty() => return Err(at(line, format!("{} is empty", name(k)))),
                Err(_) => return Err(at(line, format!("{}: '{t}' is not a number", name(k)))),
            };
            columns[c].1.try_reserve(1).map_err(full)?;
            columns[c].1.push(v);
        }
    }
    Ok((labels, columns))
}

/// Compute every figure of the file. Each metric sorts each column once,
/// `O(n log n)` for `n` rows; the pAUC's bootstrap draws its resamples once for all columns
/// and pairs and evaluates each from the sorted columns by counts, `O(n log n + B n)`
/// ([`rankrisk::metrics::bootstrap`]).
///
/// # Errors
/// A message for an unreadable or malformed file, one class only, or a bad range or level.
pub fn report(args: &MetricsArgs) -> Result<MetricsReport, String> {
    let (labels, columns) = read_table(args)?;
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
    let max_fpr = args.max_fpr.unwrap_or(args.beta);
    let boot = Bootstrap {
        resamples: args.resamples,
        seed: args.seed,
        level: args.level,
    };
    let m = |e: MetricError| format!("{}: {e}", args.input.display());
    let (alpha, beta) = (args.alpha, args.beta);
    let positives = labels.iter().filter(|&&y| y > 0.0).count();
    let mut reports = Vec::new();
    let mut delongs = Vec::new();
    let mut estimates = Vec::new();
    for (name, scores) in &columns {
        let d = DeLong::new(scores, &labels).map_err(m)?;
        let estimate = pauc(scores, &labels, alpha, beta).map_err(m)?;
        reports.push(ColumnReport {
            column: name.clone(),
            positives,
            negatives: labels.len() - positives,
            auc: d.interval(args.level).map_err(m)?,
            pauc: Interval {
                estimate,
                lower: f64::NAN,
                upper: f64::NAN,
                level: args.level,
            },
            mcclish_pauc: mcclish_pauc(scores, &labels, max_fpr).map_err(m)?,
            two_way_pauc: bootstrap_interval(scores, &labels, &boot, |s, y| {
                libauc_two_way_pauc(s, y, args.min_tpr, max_fpr)
            })
            .map_err(m)?,
        });
        delongs.push(d);
        estimates.push(estimate);
    }
    // One bootstrap for every column and pair: the same resamples the per-column intervals and
    // the paired tests each drew before (one seed), drawn once.
    let slices: Vec<&[f64]> = columns.iter().map(|(_, s)| s.as_slice()).collect();
    let replicates = pauc_replicates(&slices, &labels, &boot, alpha, beta).map_err(m)?;
    for ((r, b), &estimate) in reports.iter_mut().zip(&replicates).zip(&estimates) {
        r.pauc = interval_of_replicates(estimate, b.clone(), args.level).map_err(m)?;
    }
    for a in 0..columns.len() {
        for b in a + 1..columns.len() {
            pairs.push(PairReport {
                first: columns[a].0.clone(),
                second: columns[b].0.clone(),
                auc: delongs[a].compare(&delongs[b]).map_err(m)?,
                pauc: compare_replicates(
                    estimates[a] - estimates[b],
                    &replicates[a],
                    &replicates[b],
                ),
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
    if let Some(path) = &args.json {
        rankrisk::experiments::paths::check_output(path, "--json", &[args.input.as_path()])?;
    }
    let r = report(args)?;
    let pct = 100.0 * r.bootstrap.level;
    outln!(
        "| scores | N+ | N- | AUC ({pct}% DeLong) | pAUC[{}, {}] ({pct}% bootstrap, B = {}) | McClish pAUC[0, {}] | two-way pAUC (TPR >= {}, FPR <= {}; {pct}% bootstrap) |",
        r.fpr.0,
        r.fpr.1,
        r.bootstrap.resamples,
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
            outln!(
                "| {} - {} | {:+.4} (se {:.4}) | {:.4} | {:+.4} (se {:.4}) | {:.4} |",
                p.first,
                p.second,
                p.auc.difference,
                p.auc.std_error,
                p.auc.p_value,
                p.pauc.difference,
                p.pauc.std_error,
                p.pauc.p_value
            )?;
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
