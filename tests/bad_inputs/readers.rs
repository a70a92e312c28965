//! Bad inputs: readers (issue 39). The data readers never drop data silently, never panic and
//! never abort on an allocation: every row that does not parse is an error naming the file, the
//! physical line and the field; sizes taken from the input are checked before anything is
//! allocated; the format of a file is chosen robustly (and can be forced), and an error says
//! which format was assumed and why; a file that is not UTF-8 says so.

use std::path::Path;

use super::{
    CX_HEADER, Case, case, chexpert_files, cx_config, cx_rows, leak, rankrisk, run, scratch,
};

/// `fit-linear --train-file {dir}/FILE` and more arguments.
fn fit(file: &str, more: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec![
        "fit-linear",
        "--train-file",
        leak(format!("{{dir}}/{file}")),
    ];
    args.extend_from_slice(more);
    args
}

/// The standard error of `c` run again: no Rust debug structure may reach the user.
fn no_debug_output(c: &Case, dir: &Path) {
    let d = dir.to_str().unwrap();
    let args: Vec<String> = c.args.iter().map(|a| a.replace("{dir}", d)).collect();
    let out = rankrisk(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    for debug in [
        "Error {",
        "kind:",
        "Some(",
        "Utf8Error",
        "ParseFloatError",
        "\\n",
    ] {
        assert!(!err.contains(debug), "{}: {debug:?} in: {err}", c.name);
    }
}

/// Run every case (exit status 2, the needles, no panic, no debug structure).
fn refuse_all(name: &str, cases: &[Case]) {
    let d = scratch(name);
    for c in cases {
        run(c, &d);
        no_debug_output(c, &d);
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn labels_that_are_not_numbers_are_errors_on_their_line() {
    refuse_all(
        "yesno",
        &[
            case(
                "yes/no labels under a header",
                &fit("yn.csv", &[]),
                &[
                    "yn.csv, line 2: column 3: 'yes' is not a number",
                    "labels must be numbers",
                ],
            )
            .file("yn.csv", "a,b,y\n1,2,yes\n3,4,no\n5,6,yes\n"),
            case(
                "yes/no labels without a header",
                &fit("yn0.csv", &[]),
                &["yn0.csv, line 1: column 3: 'yes' is not a number"],
            )
            .file("yn0.csv", "1,2,yes\n3,4,no\n5,6,yes\n"),
            case(
                "a second header line",
                &fit("two.csv", &[]),
                &["two.csv, line 2: column 1: 'c' is not a number"],
            )
            .file("two.csv", "a,b,y\nc,d,z\n1,2,0\n3,4,1\n"),
            case(
                "a third label value",
                &fit("three.csv", &[]),
                &["three.csv, line 4", "more than two label values (0, 1, 2)"],
            )
            .file("three.csv", "1,2,0\n3,4,1\n5,6,1\n7,8,2\n"),
        ],
    );
}

#[test]
fn another_separator_is_an_error_with_a_hint() {
    refuse_all(
        "separators",
        &[
            case(
                "semicolons with a header",
                &fit("semi.csv", &[]),
                &[
                    "semi.csv, line 1: column 1",
                    "fields are separated by ','; this one holds ';'",
                ],
            )
            .file("semi.csv", "a;b;y\n1;2;0\n3;4;1\n"),
            case(
                "semicolons without a header",
                &fit("semi0.csv", &[]),
                &["semi0.csv, line 1: column 1: '1;2;0'", "holds ';'"],
            )
            .file("semi0.csv", "1;2;0\n3;4;1\n"),
            case(
                "tabs in a .csv file",
                &fit("tabs.csv", &[]),
                &["tabs.csv, line 1", "holds a tab"],
            )
            .file("tabs.csv", "1\t2\t0\n3\t4\t1\n"),
            case(
                "a row of another width after a header",
                &fit("narrow.csv", &[]),
                &["narrow.csv, line 2: 3 columns where the header (line 1) has 2"],
            )
            .file("narrow.csv", "a,b\n1,2,0\n3,4,1\n"),
        ],
    );
}

#[test]
fn missing_values_are_the_same_error_on_the_first_and_later_rows() {
    let shape = |file: &str, line: usize| -> &'static str {
        leak(format!(
            "{file}, line {line}: column 2: 'NA' is not a number (a missing value"
        ))
    };
    refuse_all(
        "missing",
        &[
            case(
                "NA on the first row",
                &fit("na1.csv", &[]),
                &[shape("na1.csv", 1)],
            )
            .file("na1.csv", "1,NA,0\n3,4,1\n5,6,0\n"),
            case(
                "NA on the first row after a header",
                &fit("na2.csv", &[]),
                &[shape("na2.csv", 2)],
            )
            .file("na2.csv", "a,b,y\n1,NA,0\n3,4,1\n"),
            case(
                "NA further down",
                &fit("na4.csv", &[]),
                &[shape("na4.csv", 4)],
            )
            .file("na4.csv", "1,2,0\n3,4,1\n\n5,NA,1\n"),
            case(
                "a row of NA first",
                &fit("allna.csv", &[]),
                &["allna.csv, line 1: column 1: 'NA' is not a number (a missing value"],
            )
            .file("allna.csv", "NA,NA,NA\n1,2,0\n3,4,1\n"),
            case(
                "an empty field",
                &fit("empty.csv", &[]),
                &["empty.csv, line 1: column 2: '' is not a number (an empty field"],
            )
            .file("empty.csv", "1,,0\n3,4,1\n"),
            case(
                "nan on the first row",
                &fit("nan1.csv", &[]),
                &["nan1.csv, line 1: column 2: the value 'nan' is not finite"],
            )
            .file("nan1.csv", "1,nan,0\n3,4,1\n"),
            case(
                "an infinite label",
                &fit("inflabel.csv", &[]),
                &["inflabel.csv, line 2: column 3: the label 'inf' is not finite"],
            )
            .file("inflabel.csv", "1,2,0\n3,4,inf\n"),
            case(
                "a NaN target",
                &fit(
                    "nantarget.csv",
                    &["--loss", "absolute", "--solver", "pdprox-dual"],
                ),
                &[
                    "nantarget.csv, line 3: column 3: the target of row 2",
                    "not finite",
                ],
            )
            .file("nantarget.csv", "1,2,0.5\n3,4,1.5\n5,6,NaN\n"),
        ],
    );
}

#[test]
fn libsvm_indices_must_increase_and_sizes_are_checked() {
    refuse_all(
        "libsvm",
        &[
            case(
                "a repeated index",
                &fit("dup.svm", &[]),
                &["dup.svm, line 2: feature index 2 appears twice"],
            )
            .file("dup.svm", "+1 1:1 3:2\n-1 2:1 2:5\n"),
            case(
                "decreasing indices",
                &fit("down.svm", &[]),
                &[
                    "down.svm, line 1: feature index 1 comes after 3",
                    "increasing",
                ],
            )
            .file("down.svm", "+1 3:1 1:2\n-1 1:1\n"),
            case(
                "index 10^12",
                &fit("huge.svm", &[]),
                &[
                    "huge.svm: 2 rows x 1000000000000 columns",
                    "need 16000000000000 bytes",
                    "of memory available",
                ],
            )
            .file("huge.svm", "+1 1:1\n-1 1000000000000:1\n"),
            case(
                "index 2^64 - 1",
                &fit("max.svm", &[]),
                &["max.svm: 2 rows x 18446744073709551615 columns", "bytes"],
            )
            .file("max.svm", "+1 1:1\n-1 18446744073709551615:1\n"),
            case(
                "index 10^30",
                &fit("huger.svm", &[]),
                &["huger.svm, line 2: feature index 1000000000000000000000000000000 is too large"],
            )
            .file(
                "huger.svm",
                "+1 1:1\n-1 1000000000000000000000000000000:1\n",
            ),
        ],
    );
}

#[test]
fn a_libsvm_file_starting_with_a_comment_or_a_label_only_row_is_read_as_libsvm() {
    let d = scratch("libsvm-first");
    // No extension to go by: the comment and the label-only row are skipped when choosing the
    // format. Without the label-only row the data would hold one class only (refused), so a
    // success means every row was read.
    let data = d.join("first.txt");
    std::fs::write(
        &data,
        "# LIBSVM data\n+1\n-1 1:1 3:2\n-1 2:1\n-1 1:2 2:1 3:1 # a trailing comment\n",
    )
    .unwrap();
    let json = d.join("out.json");
    let out = rankrisk(&[
        "fit-linear".into(),
        "--train-file".into(),
        data.display().to_string(),
        "--max-iter".into(),
        "50".into(),
        "--json".into(),
        json.display().to_string(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["data"], "first");
    // Dimension 3 (the largest index), 4 rows: the accuracy is a multiple of 1/4.
    assert_eq!(report["w"].as_array().map(Vec::len), Some(3), "{report}");
    let acc = report["train_accuracy"].as_f64().unwrap();
    assert!((acc * 4.0 - (acc * 4.0).round()).abs() < 1e-9, "{acc}");
    // The same file forced to CSV: refused, saying it was read as CSV because it was told so.
    let forced = case(
        "LIBSVM forced to CSV",
        &[
            "fit-linear",
            "--train-file",
            "{dir}/first.txt",
            "--format",
            "csv",
        ],
        &["first.txt, line 2", "[read as CSV, as given]"],
    );
    run(&forced, &d);
    std::fs::remove_dir_all(&d).ok();
    // A file whose extension says LIBSVM but that holds CSV: the error says why it was read as
    // LIBSVM and how to force another format.
    refuse_all(
        "format",
        &[case(
            "CSV in a .svm file",
            &fit("csv.svm", &[]),
            &[
                "csv.svm, line 1",
                "[read as LIBSVM: the file name ends in .svm]",
                "--format csv|tsv|libsvm",
            ],
        )
        .file("csv.svm", "1,2,0\n3,4,1\n")],
    );
}

#[test]
fn huge_generated_sets_are_refused_before_allocating() {
    refuse_all(
        "synthetic",
        &[
            case(
                "synthetic n = 10^12",
                &["fit-linear", "--data", "synthetic:n=1000000000000,d=10"],
                &["synthetic set", "1000000000000 rows x 14 columns", "bytes"],
            ),
            case(
                "synthetic d = 2^64 - 1",
                &[
                    "fit-linear",
                    "--data",
                    "synthetic:n=100,d=18446744073709551615",
                ],
                &["synthetic set", "100 rows x 18446744073709551615 columns"],
            ),
        ],
    );
}

#[test]
fn a_file_that_is_not_utf8_says_so() {
    let cfg_dir = scratch("utf8-cx");
    let mut csv = cx_rows(CX_HEADER);
    // Row 3 (line 4): a Latin-1 byte in the sex column.
    csv = csv.replacen("Female", "F\u{e9}male", 3);
    let latin1: Vec<u8> = csv
        .chars()
        .map(|c| if c == '\u{e9}' { 0xe9 } else { c as u8 })
        .collect();
    let cx = chexpert_files(
        case(
            "CheXpert CSV not UTF-8",
            &["train", "{dir}/cx.toml"],
            &[".csv, line 2: not UTF-8 text"],
        ),
        "",
        b"x",
    );
    // chexpert_files writes text; overwrite both CSV files with the Latin-1 bytes.
    let cx = cx
        .file("cx/CheXpert-v1.0-small/train.csv", latin1.clone())
        .file("cx/CheXpert-v1.0-small/valid.csv", latin1)
        .file("cx.toml", leak(cx_config(&cfg_dir)));
    let mut age = cx_rows(CX_HEADER);
    age = age.replacen(",50,", ",fifty,", 1);
    let bad_age = chexpert_files(
        case(
            "CheXpert age that is not a number",
            &["train", "{dir}/cx.toml"],
            &["line 2: Age 'fifty' is not a number"],
        ),
        &age,
        b"x",
    )
    .file("cx.toml", leak(cx_config(&cfg_dir)));
    for c in [&cx, &bad_age] {
        run(c, &cfg_dir);
    }
    std::fs::remove_dir_all(&cfg_dir).ok();
    refuse_all(
        "utf8",
        &[
            case(
                "a Latin-1 CSV file",
                &fit("latin1.csv", &[]),
                &[
                    "latin1.csv, line 3: not UTF-8 text",
                    "save the file as UTF-8",
                ],
            )
            .file("latin1.csv", b"a,b,y\n1,2,0\n3,\xe9,1\n".to_vec()),
            case(
                "a UTF-16 file",
                &fit("utf16.csv", &[]),
                &["utf16.csv, line 1: not UTF-8 text", "UTF-16"],
            )
            .file("utf16.csv", b"\xff\xfe1\x00,\x002\x00".to_vec()),
            case(
                "a Latin-1 LIBSVM file",
                &fit("latin1.svm", &[]),
                &["latin1.svm, line 2: not UTF-8 text"],
            )
            .file("latin1.svm", b"+1 1:1\n-1 2:1 # \xe9t\xe9\n".to_vec()),
        ],
    );
}

/// CRC-32 (IEEE), for the gzip trailer.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `data` as a gzip file of one stored (uncompressed) deflate block.
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(data.len()).unwrap();
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[test]
fn an_idx_header_of_a_huge_size_is_refused_before_allocating() {
    // Images 65535 x 65535 x 65535 (2.8e14 bytes) followed by 64 data bytes, plain (its size
    // disagrees with the file's) and gzip-compressed (the size is checked against memory before
    // the stream is inflated).
    let mut huge = vec![0u8, 0, 0x08, 3];
    for _ in 0..3 {
        huge.extend_from_slice(&65535u32.to_be_bytes());
    }
    huge.extend(std::iter::repeat_n(0u8, 64));
    let labels = vec![0u8, 0, 8, 1, 0, 0, 0, 1, 0];
    for (gz, needles) in [
        (
            false,
            &[
                "-images-idx3-ubyte, data: the header says 65535 x 65535 x 65535",
                "64 data bytes follow",
            ][..],
        ),
        (
            true,
            &[
                "-images-idx3-ubyte.gz (header 65535 x 65535 x 65535): 65535 rows x 4294836225 \
                 columns of 1-byte values need 281462092005375 bytes",
            ][..],
        ),
    ] {
        let d = scratch(if gz { "idx-gz" } else { "idx" });
        let mut c = case(
            "IDX header of a huge size",
            &["train", "{dir}/idx.toml"],
            needles,
        )
        .file(
            "idx.toml",
            leak(format!(
                "task = \"long-tailed\"\ndata_dir = {:?}\nquiet = true\nout = {:?}\n",
                d.join("idx"),
                d.join("idx-out")
            )),
        );
        for f in ["train-images-idx3-ubyte", "t10k-images-idx3-ubyte"] {
            c = if gz {
                c.file(leak(format!("idx/{f}.gz")), gzip_stored(&huge))
            } else {
                c.file(leak(format!("idx/{f}")), huge.clone())
            };
        }
        for f in ["train-labels-idx1-ubyte", "t10k-labels-idx1-ubyte"] {
            c = c.file(leak(format!("idx/{f}")), labels.clone());
        }
        run(&c, &d);
        no_debug_output(&c, &d);
        std::fs::remove_dir_all(&d).ok();
    }
}

/// Found by an independent probe: a test file whose label values differ from the training
/// file's was mapped on its own (1 positive in training, negative in the test file), and a
/// scores file without a header lost its first row to the header.
#[test]
fn a_test_file_is_labelled_as_the_training_file_and_a_scores_file_needs_its_header() {
    refuse_all(
        "probe",
        &[
            case(
                "test labels that the training file does not have",
                &fit("tr.csv", &["--test-file", "{dir}/te.csv"]),
                &[
                    "te.csv",
                    "the label 2 of row 1",
                    "training file's label values (0, 1)",
                    "tr.csv",
                ],
            )
            .file("tr.csv", "a,b,y\n1,2,0\n3,4,1\n5,6,0\n7,1,1\n")
            .file("te.csv", "a,b,y\n1,2,1\n3,4,2\n"),
            case(
                "a scores file without its header",
                &["metrics", "{dir}/s.csv"],
                &["s.csv, line 1", "holds only numbers", "header"],
            )
            .file("s.csv", "1,0.9\n0,0.2\n1,0.7\n0,0.4\n"),
        ],
    );
    // A test file of one value is labelled by the training file's meaning of that value: the
    // training file's negative class here, so a model that scores every row negative is right.
    let d = scratch("one-value");
    std::fs::write(d.join("tr.csv"), "a,y\n-2,1\n-1,1\n1,2\n2,2\n").unwrap();
    std::fs::write(d.join("te.csv"), "a,y\n-3,1\n-2,1\n").unwrap();
    let out = rankrisk(&[
        "fit-linear".into(),
        "--train-file".into(),
        d.join("tr.csv").display().to_string(),
        "--test-file".into(),
        d.join("te.csv").display().to_string(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("test accuracy 1.0000"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&d).ok();
}
