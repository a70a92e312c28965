//! Bad inputs: metrics_scale (issue 39). The scores CSV of `rankrisk metrics`: the header is the
//! first line only; every other line that does not parse is an error naming the file, the line
//! and the column, never skipped; non-finite scores and labels other than +1/-1 or 1/0 are
//! errors naming the value; huge inputs end in an error, never an abort.

use super::{case, leak, run, scratch};

/// `rankrisk metrics {dir}/FILE` and more arguments.
fn metrics(file: &str, more: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec!["metrics", leak(format!("{{dir}}/{file}"))];
    args.extend_from_slice(more);
    args
}

#[test]
fn every_bad_row_of_a_scores_file_names_its_line_and_column() {
    let d = scratch("rows");
    let cases = [
        case(
            "a score that is not a number",
            &metrics("abc.csv", &[]),
            &["abc.csv, line 3: column 2 ('score'): 'abc' is not a number"],
        )
        .file("abc.csv", "label,score\n1,0.9\n0,abc\n1,0.4\n0,0.2\n"),
        case(
            "an empty score",
            &metrics("empty.csv", &[]),
            &["empty.csv, line 4: column 3 ('b') is empty"],
        )
        .file("empty.csv", "label,a,b\n1,0.9,0.8\n0,0.1,0.2\n1,0.5,\n"),
        case(
            "a NaN score",
            &metrics("nan.csv", &[]),
            &["nan.csv, line 2: column 2 ('score'): score 'NaN' is not finite"],
        )
        .file("nan.csv", "label,score\n1,NaN\n0,0.1\n"),
        case(
            "an infinite score in a later column",
            &metrics("inf.csv", &[]),
            &["inf.csv, line 5: column 3 ('b'): score '-inf' is not finite"],
        )
        .file("inf.csv", "label,a,b\n1,1,1\n0,0,0\n1,1,1\n0,0,-inf\n"),
        case(
            "a score beyond f64",
            &metrics("big.csv", &[]),
            &["big.csv, line 3: column 2 ('score'): score '1e999' is not finite"],
        )
        .file("big.csv", "label,score\n1,0.5\n0,1e999\n"),
        case(
            "a label that is neither +1/-1 nor 1/0",
            &metrics("two.csv", &[]),
            &["two.csv, line 3: column 1 ('label'): label '2' is not +1/-1 or 1/0"],
        )
        .file("two.csv", "label,score\n1,0.5\n2,0.1\n"),
        case(
            "a label that is a word",
            &metrics("word.csv", &[]),
            &["word.csv, line 2: column 2 ('label'): label 'yes' is not +1/-1 or 1/0"],
        )
        .file("word.csv", "score,label\n0.5,yes\n0.1,no\n"),
        case(
            "labels 0 and -1 in one file",
            &metrics("mixed.csv", &[]),
            &[
                "mixed.csv, line 4: column 1 ('label'): label '-1', but line 3 has label '0'",
                "+1/-1 or 1/0, not both",
            ],
        )
        .file("mixed.csv", "label,score\n1,0.5\n0,0.1\n-1,0.2\n"),
        case(
            "blank lines hold no row: line numbers after them stay the file's",
            &metrics("blank.csv", &[]),
            &["blank.csv, line 5: column 2 ('score'): 'x' is not a number"],
        )
        .file("blank.csv", "label,score\n1,0.5\n\n0,0.1\n1,x\n\n"),
        case(
            "a second header line",
            &metrics("header2.csv", &[]),
            &["header2.csv, line 2: column 1 ('label'): label 'label' is not +1/-1 or 1/0"],
        )
        .file("header2.csv", "label,score\nlabel,score\n1,0.5\n0,0.1\n"),
        case(
            "a header after blank lines is not a header",
            &metrics("late.csv", &[]),
            &["late.csv, line 1: empty, but the header belongs there"],
        )
        .file("late.csv", "\n\nlabel,score\n1,0.5\n0,0.1\n"),
        case(
            "a short row",
            &metrics("short.csv", &[]),
            &[
                "short.csv, line 3: 2 columns where the header (line 1) has 3",
                "column 3 ('b') is missing",
            ],
        )
        .file("short.csv", "label,a,b\n1,0.1,0.2\n0,0.3\n"),
        case(
            "a long row",
            &metrics("long.csv", &[]),
            &[
                "long.csv, line 2: 3 columns where the header (line 1) has 2",
                "column 3 ('0.7') is one too many",
            ],
        )
        .file("long.csv", "label,score\n1,0.5,0.7\n0,0.1\n"),
        case(
            "an unclosed quote",
            &metrics("quote.csv", &[]),
            &["quote.csv, line 3: column 2: no closing quote"],
        )
        .file("quote.csv", "label,score\n1,\"0.5\"\n0,\"0.1\n"),
        case(
            "a score that is not UTF-8",
            &metrics("latin1.csv", &[]),
            &["latin1.csv, line 3: column 2: not UTF-8 text"],
        )
        .file("latin1.csv", b"label,score\n1,0.5\n0,0.\xe9\n".to_vec()),
        case(
            "an empty file",
            &metrics("none.csv", &[]),
            &["none.csv: the file is empty", "a header row"],
        )
        .file("none.csv", ""),
        case(
            "a header of one column",
            &metrics("one.csv", &[]),
            &["one.csv, line 1: the header has 1 column"],
        )
        .file("one.csv", "label\n1\n0\n"),
        case(
            "a label column that does not exist",
            &metrics("named.csv", &["--label", "y"]),
            &["named.csv, line 1: no column 'y' (columns: label, score)"],
        )
        .file("named.csv", "label,score\n1,0.5\n0,0.1\n"),
        case(
            "one class only",
            &metrics("class.csv", &[]),
            &["class.csv", "1 positives and 0 negatives"],
        )
        .file("class.csv", "label,score\n1,0.5\n"),
    ];
    for c in &cases {
        run(c, &d);
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn huge_inputs_are_errors_not_aborts() {
    let d = scratch("huge");
    // A line of 17 MiB without a line break: refused at its length, not held.
    let mut endless = b"label,score\n1,0.5\n0,".to_vec();
    endless.extend(std::iter::repeat_n(b'7', 17 << 20));
    let cases = [
        case(
            "a line without end",
            &metrics("endless.csv", &[]),
            &["endless.csv, line 3: longer than 16777216 bytes"],
        )
        .file("endless.csv", endless),
        case(
            "more resamples than memory holds",
            &metrics("ok.csv", &["--resamples", "4611686018427387903"]),
            &[
                "ok.csv",
                "not enough memory for 4611686018427387903 bootstrap replicates",
            ],
        )
        .file("ok.csv", "label,score\n1,0.5\n0,0.1\n1,0.3\n0,0.4\n"),
        case(
            "a single resample",
            &metrics("ok1.csv", &["--resamples", "1"]),
            &["ok1.csv", "at least 2 resamples"],
        )
        .file("ok1.csv", "label,score\n1,0.5\n0,0.1\n"),
    ];
    for c in &cases {
        run(c, &d);
    }
    std::fs::remove_dir_all(&d).ok();
}
