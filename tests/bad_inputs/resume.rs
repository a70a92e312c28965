//! Bad inputs: a resumed run that differs from the run that wrote its checkpoint, a second
//! run on a folder in use, and checkpoint files that were corrupted (issue 39). Each trains a
//! tiny ResNet-20 run on the fetched Fashion-MNIST first.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::{rankrisk, scratch};

/// A long-tailed run of 600 images for one pass into `out` (MB, batch 16), with the keys of
/// `set` replacing or adding to those, written to `dir/NAME.toml`.
fn config(dir: &Path, name: &str, out: &Path, set: &[(&str, String)]) -> PathBuf {
    let q = |p: PathBuf| format!("{:?}", p.display().to_string());
    let fmnist = rankrisk_datasets::fetched::item("fashion-mnist").unwrap_or_default();
    let mut keys: Vec<(&str, String)> = vec![
        ("task", "\"long-tailed\"".into()),
        ("data_dir", q(fmnist)),
        ("positive", "[3]".into()),
        ("method", "\"mb\"".into()),
        ("limit", "600".into()),
        ("test_limit", "200".into()),
        ("batch", "16".into()),
        ("epochs", "1".into()),
        ("bootstrap", "0".into()),
        ("quiet", "true".into()),
        ("out", q(out.to_path_buf())),
    ];
    for (k, v) in set {
        match keys.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v.clone(),
            None => keys.push((k, v.clone())),
        }
    }
    let text: String = keys.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `rankrisk train` on the config [`config`] writes (its arguments as there).
fn train(dir: &Path, name: &str, out: &Path, set: &[(&str, String)]) -> Output {
    rankrisk(&["train", config(dir, name, out, set).to_str().unwrap()])
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn refused(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "no {n:?} in: {err}");
    }
}

#[test]
fn a_resumed_run_with_other_settings_or_data_is_refused() {
    if rankrisk_datasets::fetched::require("fashion-mnist").is_none() {
        return;
    }
    let dir = scratch("changed");
    let out = dir.join("run");
    ok(&train(&dir, "first", &out, &[]));
    let saved = std::fs::read_to_string(out.join("config.toml")).unwrap();
    let metrics = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let resume = ("resume", "true".to_string());
    type Change<'a> = (Vec<(&'a str, String)>, Vec<&'a str>);
    let mut changes: Vec<Change> = vec![
        (vec![("batch", "32".into())], vec!["batch: 16 then, 32 now"]),
        (
            vec![("limit", "700".into())],
            vec!["limit: 600 then, 700 now"],
        ),
        (
            vec![("method", "\"ce\"".into())],
            vec!["method: \"mb\" then, \"ce\" now"],
        ),
        (vec![("positive", "[5]".into())], vec!["positive"]),
    ];
    if let Some(mnist) = rankrisk_datasets::fetched::item("mnist") {
        changes.push((
            vec![
                ("data", "\"mnist\"".into()),
                ("data_dir", format!("{:?}", mnist.display().to_string())),
            ],
            vec!["data: \"fashion-mnist\" then, \"mnist\" now", "data_dir"],
        ));
    }
    for (k, (mut set, needles)) in changes.into_iter().enumerate() {
        set.push(resume.clone());
        let path = config(&dir, &format!("changed-{k}"), &out, &set);
        let mut all = vec!["cannot resume", out.to_str().unwrap()];
        all.extend(needles);
        refused(&rankrisk(&["train", path.to_str().unwrap()]), &all);
        // Nothing of the run was touched.
        assert_eq!(
            std::fs::read_to_string(out.join("config.toml")).unwrap(),
            saved
        );
        assert_eq!(
            std::fs::read_to_string(out.join("metrics.csv")).unwrap(),
            metrics
        );
    }
    // Without the saved config.toml the checkpoint's own record of the run refuses it.
    std::fs::remove_file(out.join("config.toml")).unwrap();
    let path = config(
        &dir,
        "nocfg",
        &out,
        &[("batch", "8".into()), resume.clone()],
    );
    refused(
        &rankrisk(&["train", path.to_str().unwrap()]),
        &["cannot resume", "batch: 16 then, 8 now"],
    );
    std::fs::write(out.join("config.toml"), &saved).unwrap();
    // The same run with a larger budget, on another backend, with progress output, resumes.
    let more = config(
        &dir,
        "more",
        &out,
        &[
            ("epochs", "2".into()),
            ("backend", "\"ndarray\"".into()),
            ("quiet", "false".into()),
            resume,
        ],
    );
    ok(&rankrisk(&["train", more.to_str().unwrap()]));
    let after = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    assert!(after.lines().count() > metrics.lines().count(), "{after}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_second_run_on_a_folder_in_use_writes_nothing() {
    let dir = scratch("busy");
    let out = dir.join("run");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("config.toml"), "the first run's config\n").unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(out.join("run.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    // Needs no data: the lock is taken before anything is read or written.
    let path = dir.join("second.toml");
    std::fs::write(
        &path,
        format!(
            "task = \"long-tailed\"\ndata_dir = {:?}\nquiet = true\nout = {:?}\n",
            dir.display().to_string(),
            out.display().to_string()
        ),
    )
    .unwrap();
    refused(
        &rankrisk(&["train", path.to_str().unwrap()]),
        &["another run is using", out.to_str().unwrap()],
    );
    assert_eq!(
        std::fs::read_to_string(out.join("config.toml")).unwrap(),
        "the first run's config\n"
    );
    drop(lock);
    std::fs::remove_dir_all(&dir).ok();
}

/// Flip the byte in the middle of `path`.
fn flip(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn corrupted_or_non_finite_checkpoints_are_refused() {
    if rankrisk_datasets::fetched::require("fashion-mnist").is_none() {
        return;
    }
    let dir = scratch("corrupt");
    let good = dir.join("good");
    ok(&rankrisk(&[
        "train",
        config(&dir, "good", &good, &[]).to_str().unwrap(),
    ]));
    ok(&rankrisk(&["eval", good.to_str().unwrap()]));
    let fresh = |name: &str| {
        let out = dir.join(name);
        copy_dir(&good, &out);
        // The copy's config names its own folder.
        let text = std::fs::read_to_string(out.join("config.toml"))
            .unwrap()
            .replace(good.to_str().unwrap(), out.to_str().unwrap());
        std::fs::write(out.join("config.toml"), text).unwrap();
        out
    };
    let resume = |out: &Path| {
        let text = std::fs::read_to_string(out.join("config.toml")).unwrap();
        let path = out.with_extension("toml");
        std::fs::write(&path, text.replace("resume = false", "resume = true")).unwrap();
        rankrisk(&["train", path.to_str().unwrap()])
    };
    // A flipped byte in each file of the training checkpoint.
    for file in ["model.bpk", "optimizer.bpk", "objective.bpk", "state.cbor"] {
        let out = fresh(&format!("flip-{file}"));
        flip(&out.join("checkpoint").join(file));
        refused(&resume(&out), &["corrupted", file, "CRC-32"]);
    }
    // A flipped byte in the best model, and a best model without its checksum file.
    let out = fresh("flip-best");
    flip(&out.join("best.bpk"));
    refused(
        &rankrisk(&["eval", out.to_str().unwrap()]),
        &["corrupted", "best.bpk"],
    );
    let out = fresh("no-sum");
    std::fs::remove_file(out.join("best.bpk.crc32")).unwrap();
    // A folder from before checksums: scored, with a warning naming the missing file.
    let o = rankrisk(&["eval", out.to_str().unwrap()]);
    ok(&o);
    let warned = String::from_utf8_lossy(&o.stderr);
    assert!(
        warned.contains("warning") && warned.contains("best.bpk.crc32"),
        "{warned}"
    );
    // A checksum that is there and does not match stays refused.
    rankrisk_models::checkpoint::write_checksum(&out.join("best.bpk")).unwrap();
    flip(&out.join("best.bpk"));
    refused(
        &rankrisk(&["eval", out.to_str().unwrap()]),
        &["corrupted", "best.bpk"],
    );
    // The objective.bpk of another run (same settings, checksum file and all), copied in:
    // its checkpoint id is not this checkpoint's.
    let other = dir.join("other");
    ok(&rankrisk(&[
        "train",
        config(&dir, "other", &other, &[("seed", "7".into())])
            .to_str()
            .unwrap(),
    ]));
    let out = fresh("foreign-objective");
    for file in ["objective.bpk", "objective.bpk.crc32"] {
        std::fs::copy(
            other.join("checkpoint").join(file),
            out.join("checkpoint").join(file),
        )
        .unwrap();
    }
    refused(
        &resume(&out),
        &[
            "objective.bpk",
            "another checkpoint",
            "copied from another run",
        ],
    );
    // NaN weights with a matching checksum (a diverged model saved, or an edited file).
    let out = fresh("nan");
    let best = out.join("best.bpk");
    let mut bytes = std::fs::read(&best).unwrap();
    let at = (bytes.len() / 2) & !3;
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&best, bytes).unwrap();
    rankrisk_models::checkpoint::write_checksum(&best).unwrap();
    refused(
        &rankrisk(&["eval", out.to_str().unwrap()]),
        &["non-finite", "best.bpk"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The test AUC of every evaluation point of a run's summary.
fn test_aucs(out: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    summary["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["test_auc"].as_f64().unwrap())
        .collect()
}

#[test]
fn a_checkpoint_with_the_objective_in_state_cbor_still_resumes() {
    if rankrisk_datasets::fetched::require("fashion-mnist").is_none() {
        return;
    }
    let dir = scratch("legacy");
    let ce = |epochs: usize, resume: bool| {
        vec![
            ("method", "\"ce\"".to_string()),
            ("epochs", epochs.to_string()),
            ("resume", resume.to_string()),
        ]
    };
    let whole = dir.join("whole");
    ok(&train(&dir, "whole", &whole, &ce(2, false)));
    // One pass, then its checkpoint as runs before 2026-11-26 wrote it: no objective.bpk, the
    // objective's state (CE's: none) inside state.cbor, the settings under their old names.
    let split = dir.join("split");
    ok(&train(&dir, "split", &split, &ce(1, false)));
    let ckpt = split.join("checkpoint");
    let no_record = dir.join("no-record");
    copy_dir(&split, &no_record);
    for d in [&ckpt, &no_record.join("checkpoint")] {
        std::fs::remove_file(d.join("objective.bpk")).unwrap();
        std::fs::remove_file(d.join("objective.bpk.crc32")).unwrap();
    }
    let state = ckpt.join("state.cbor");
    let value: ciborium::Value =
        ciborium::from_reader(&std::fs::read(&state).unwrap()[..]).unwrap();
    let ciborium::Value::Map(mut entries) = value else {
        panic!("state.cbor is not a map");
    };
    entries.push(("objective".into(), "Ce".into()));
    // Its settings as they were named then: `refresh_steps`, `progress`, no clamp as none.
    let mut renamed = 0;
    for (key, value) in entries.iter_mut() {
        if key.as_text() == Some("config")
            && let ciborium::Value::Map(config) = value
        {
            for (k, v) in config.iter_mut() {
                match k.as_text() {
                    Some("bn_refresh") => *k = "refresh_steps".into(),
                    Some("quiet") => (*k, *v) = ("progress".into(), true.into()),
                    Some("grad_clip") => *v = ciborium::Value::Null,
                    _ => continue,
                }
                renamed += 1;
            }
        }
    }
    assert_eq!(renamed, 3);
    let mut bytes = Vec::new();
    ciborium::into_writer(&ciborium::Value::Map(entries), &mut bytes).unwrap();
    std::fs::write(&state, bytes).unwrap();
    rankrisk_models::checkpoint::write_checksum(&state).unwrap();
    let resumed = config(&dir, "split2", &split, &ce(2, true));
    ok(&rankrisk(&["train", resumed.to_str().unwrap()]));
    assert_eq!(test_aucs(&whole), test_aucs(&split));
    // Neither the record nor the old state: refused, naming the missing file.
    let again = config(&dir, "no-record", &no_record, &ce(2, true));
    refused(
        &rankrisk(&["train", again.to_str().unwrap()]),
        &["no objective state", "objective.bpk"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_run_starts_from_init_model_and_a_missing_one_is_refused() {
    if rankrisk_datasets::fetched::require("fashion-mnist").is_none() {
        return;
    }
    let dir = scratch("init-model");
    let ce = |lr: &str, init: Option<&Path>| {
        let mut keys = vec![("method", "\"ce\"".to_string()), ("lr", lr.to_string())];
        if let Some(p) = init {
            keys.push(("init_model", format!("{:?}", p.display().to_string())));
        }
        keys
    };
    let warm = dir.join("warm");
    ok(&train(&dir, "warm", &warm, &ce("1e-3", None)));
    let trained = test_aucs(&warm)[0];
    // A pass at a step size of 1e-12 leaves the weights where they start (only batch norm's
    // running statistics move): from the CE run's model it scores as that model does, from a
    // fresh initialization it does not.
    let from = dir.join("from");
    ok(&train(
        &dir,
        "from",
        &from,
        &ce("1e-12", Some(&warm.join("best.bpk"))),
    ));
    let fresh = dir.join("fresh");
    ok(&train(&dir, "fresh", &fresh, &ce("1e-12", None)));
    let (started, untrained) = (test_aucs(&from)[0], test_aucs(&fresh)[0]);
    assert!(
        (started - trained).abs() < 0.02 && (untrained - trained).abs() > 0.05,
        "trained {trained}, started from it {started}, fresh {untrained}"
    );
    let missing = dir.join("no-such.bpk");
    let out = train(
        &dir,
        "missing",
        &dir.join("missing"),
        &ce("1e-3", Some(&missing)),
    );
    refused(&out, &["init_model", "no-such.bpk"]);
    std::fs::remove_dir_all(&dir).ok();
}
