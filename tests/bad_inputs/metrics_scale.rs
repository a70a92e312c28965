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
            &["--resamples 1", "at least 2 resamples", "0 skips it"],
        )
        .file("ok1.csv", "label,score\n1,0.5\n0,0.1\n"),
    ];
    for c in &cases {
        run(c, &d);
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn every_bad_metrics_flag_is_named_as_the_user_typed_it() {
    let d = scratch("flags");
    let ok = "label,score\n1,0.5\n0,0.1\n1,0.3\n0,0.4\n";
    let cases = [
        ("--min-tpr 1", &["--min-tpr", "1"][..], "0 <= --min-tpr < 1"),
        (
            "--min-tpr -0.2",
            &["--min-tpr", "-0.2"][..],
            "0 <= --min-tpr < 1",
        ),
        ("--max-fpr 0", &["--max-fpr", "0"][..], "0 < --max-fpr <= 1"),
        (
            "--max-fpr 1.5",
            &["--max-fpr", "1.5"][..],
            "0 < --max-fpr <= 1",
        ),
        (
            "--alpha 0.6 --beta 0.5",
            &["--alpha", "0.6", "--beta", "0.5"][..],
            "0 <= --alpha < --beta <= 1",
        ),
        ("--level 1", &["--level", "1"][..], "0 < --level < 1"),
    ];
    for (name, flags, rule) in cases {
        let c = super::Case {
            name,
            files: vec![("ok.csv", ok.as_bytes().to_vec())],
            args: metrics("ok.csv", flags),
            stdin: None,
            env: Vec::new(),
            needles: vec![name, rule],
        };
        run(&c, &d);
    }
    // --max-fpr left out takes --beta, and the message says so.
    run(
        &case(
            "an empty FPR range names --alpha and --beta",
            &metrics("ok.csv", &["--alpha", "0", "--beta", "0"]),
            &["--alpha 0 --beta 0"],
        ),
        &d,
    );
    std::fs::remove_dir_all(&d).ok();
}

/// The peak resident memory of `cmd` in bytes (Linux's `VmHWM`, sampled until it exits), its
/// exit status and its standard output.
fn peak_memory(mut cmd: std::process::Command) -> (u64, std::process::ExitStatus, String) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let mut peak = 0;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb * 1024);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (peak, status, reader.join().unwrap())
}

/// A seeded scores file of `rows` rows (a quarter positive, 4-decimal scores that tie).
fn scores_file(path: &std::path::Path, rows: usize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "label,score").unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for i in 0..rows {
        let positive = i == 0 || (i != 1 && next() < 0.25);
        let score = next() + if positive { 0.4 } else { 0.0 };
        writeln!(out, "{},{score:.4}", u8::from(positive)).unwrap();
    }
}

#[test]
#[cfg(target_os = "linux")]
fn metrics_on_a_million_rows_stays_small_in_memory_with_any_thread_count() {
    // The default settings (2000 resamples, both pAUC intervals) on 10^6 rows; memory, not
    // time, is asserted: measured 116 MB (docs/GUIDE.md), bounded by the bootstrap's buffer
    // budget whatever RAYON_NUM_THREADS asks for.
    let d = scratch("million");
    let file = d.join("s.csv");
    scores_file(&file, 1_000_000);
    for threads in ["2", "1000000"] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rankrisk"));
        cmd.arg("metrics")
            .arg(&file)
            .env("RAYON_NUM_THREADS", threads);
        let (peak, status, out) = peak_memory(cmd);
        assert!(
            status.success(),
            "RAYON_NUM_THREADS={threads}: {status}\n{out}"
        );
        assert!(out.contains("B = 2000"), "{out}");
        assert!(
            peak < 400 << 20,
            "RAYON_NUM_THREADS={threads}: peak memory {} MB",
            peak >> 20
        );
    }
    // The bootstrap skipped: the estimates alone.
    let out = super::rankrisk(&["metrics", file.to_str().unwrap(), "--resamples", "0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("no bootstrap"), "{text}");
    std::fs::remove_dir_all(&d).ok();
}
