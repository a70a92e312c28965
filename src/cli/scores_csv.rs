//! The scores CSV of `rankrisk metrics` (and of every image run's `scores_test.csv`), read
//! line by line: a header, a label column and score columns, every bad field an error naming
//! the file, the line and the column.

use std::io::{BufRead, Read};
use std::path::Path;

/// Labels (+1/-1) and the named score columns of a CSV file.
pub type Table = (Vec<f64>, Vec<(String, Vec<f64>)>);

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
pub fn read_table(input: &Path, label: Option<&str>) -> Result<Table, String> {
    let file = input.display();
    let expected = "expected a CSV file with a header row, a label column (+1/-1 or 1/0) and one \
                    or more score columns, as every image run writes it (scores_test.csv in its \
                    output folder)";
    let at = |line: usize, e: String| format!("{file}, line {line}: {e}");
    let handle = std::fs::File::open(input).map_err(|e| format!("{file}: {e}; {expected}"))?;
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
    let label_at = match label {
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
