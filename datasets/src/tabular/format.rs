//! The format of a tabular file ([`guess_format`]): the extension's, else the one its first
//! data line shows; and the reason, which errors of [`super::read::read_table`] name.

use std::path::Path;

/// The layout of a tabular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Comma-separated values.
    Csv,
    /// Tab-separated values.
    Tsv,
    /// LIBSVM/SVMlight: `label index:value ...`.
    Libsvm,
}

impl std::fmt::Display for TableFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TableFormat::Csv => "CSV",
            TableFormat::Tsv => "TSV",
            TableFormat::Libsvm => "LIBSVM",
        })
    }
}

/// Why [`super::read::read_table`] read a file in the format it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatReason {
    /// The caller gave the format.
    Given,
    /// The file name's extension (without the dot).
    Extension(String),
    /// This line (1-based) decided it: commas (CSV), `index:value` tokens (LIBSVM), tabs (TSV),
    /// or, for CSV, several values separated by spaces only.
    Line(usize),
    /// No line decided it (every line blank, a comment or a lone value).
    Undecided,
}

/// A format and the reason it was chosen (see [`guess_format`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatChoice {
    /// The format.
    pub format: TableFormat,
    /// Why.
    pub reason: FormatReason,
}

impl std::fmt::Display for FormatChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let format = self.format;
        match &self.reason {
            FormatReason::Given => write!(f, "{format}, as given"),
            FormatReason::Extension(e) => write!(f, "{format}: the file name ends in .{e}"),
            FormatReason::Line(n) => match format {
                TableFormat::Csv => write!(f, "CSV: line {n} holds commas or several values"),
                TableFormat::Tsv => write!(f, "TSV: line {n} holds tabs"),
                TableFormat::Libsvm => write!(f, "LIBSVM: line {n} holds index:value pairs"),
            },
            FormatReason::Undecided => write!(
                f,
                "{format}: no line holds commas, tabs or index:value pairs"
            ),
        }
    }
}

/// The format of the file `path` with contents `text`: by the extension (`csv`; `tsv`, `tab`;
/// `svm`, `libsvm`, `svmlight`, case-insensitive), else by the first line that is not blank,
/// not a `#` comment and holds more than one value: commas make it CSV, `index:value` tokens
/// after the first make it LIBSVM, tabs make it TSV, values separated by spaces only CSV (whose
/// error then says so); CSV when no line decides.
pub fn guess_format(path: &Path, text: &str) -> FormatChoice {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let by_ext = match ext.as_deref() {
        Some("csv") => Some(TableFormat::Csv),
        Some("tsv" | "tab") => Some(TableFormat::Tsv),
        Some("svm" | "libsvm" | "svmlight") => Some(TableFormat::Libsvm),
        _ => None,
    };
    if let (Some(format), Some(e)) = (by_ext, ext) {
        return FormatChoice {
            format,
            reason: FormatReason::Extension(e),
        };
    }
    for (k, line) in text.lines().enumerate() {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let content = content.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = content.split_whitespace().collect();
        let format = if content.contains(',') {
            TableFormat::Csv
        } else if tokens.len() >= 2 && tokens[1..].iter().all(|t| t.contains(':')) {
            TableFormat::Libsvm
        } else if content.trim().contains('\t') {
            TableFormat::Tsv
        } else if tokens.len() >= 2 {
            TableFormat::Csv
        } else {
            continue; // a lone value: a LIBSVM row without features, or a one-column file
        };
        return FormatChoice {
            format,
            reason: FormatReason::Line(k + 1),
        };
    }
    FormatChoice {
        format: TableFormat::Csv,
        reason: FormatReason::Undecided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_is_chosen_by_extension_then_by_the_first_data_line() {
        let g = |name: &str, text: &str| guess_format(Path::new(name), text);
        assert_eq!(g("a.CSV", "1 1:2\n").format, TableFormat::Csv);
        assert_eq!(g("a.tsv", "").format, TableFormat::Tsv);
        assert_eq!(g("a.svm", "1,2,0\n").format, TableFormat::Libsvm);
        // A comment line or a label-only row first: still LIBSVM, decided by line 3.
        let c = g("a1a.t", "# made by hand\n+1\n-1 3:1 7:1\n");
        assert_eq!(
            c,
            FormatChoice {
                format: TableFormat::Libsvm,
                reason: FormatReason::Line(3)
            }
        );
        assert_eq!(c.to_string(), "LIBSVM: line 3 holds index:value pairs");
        assert_eq!(g("a", "a,b,y\n1,2,0\n").format, TableFormat::Csv);
        assert_eq!(g("a", "x:1,x:2,y\n1,2,0\n").format, TableFormat::Csv);
        assert_eq!(g("a.txt", "1\t2\t0\n").format, TableFormat::Tsv);
        assert_eq!(g("a.txt", "1 2 0\n").format, TableFormat::Csv);
        assert_eq!(g("a", "1\n0\n").reason, FormatReason::Undecided);
    }
}
