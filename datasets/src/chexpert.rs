//! CheXpert-v1.0-small (Irvin et al. 2019): `train.csv` / `valid.csv` with columns Path, Sex,
//! Age, Frontal/Lateral, AP/PA and 14 observations labelled 1 (positive), 0 (negative), -1
//! (uncertain) or blank (not mentioned), and the JPEGs under `CheXpert-v1.0-small/`.
//!
//! The five competition tasks (Cardiomegaly, Edema, Consolidation, Atelectasis, Pleural
//! Effusion) are taken one at a time or together. Uncertain labels follow a per-task policy; the
//! default is LibAUC's (U-Ones for Edema and Atelectasis, U-Zeros for the others), blanks are
//! negative. Frontal-only filtering, a seeded train/validation split (9:1 in the pAUC paper),
//! and the official `valid.csv` as the test set.

use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::error::DataError;
use crate::transform::XrayTransform;

/// The 14 observation columns, in file order.
pub const OBSERVATIONS: [&str; 14] = [
    "No Finding",
    "Enlarged Cardiomediastinum",
    "Cardiomegaly",
    "Lung Opacity",
    "Lung Lesion",
    "Edema",
    "Consolidation",
    "Pneumonia",
    "Atelectasis",
    "Pneumothorax",
    "Pleural Effusion",
    "Pleural Other",
    "Fracture",
    "Support Devices",
];

/// One of the five competition tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Task {
    /// Cardiomegaly.
    Cardiomegaly,
    /// Edema.
    Edema,
    /// Consolidation.
    Consolidation,
    /// Atelectasis.
    Atelectasis,
    /// Pleural Effusion.
    PleuralEffusion,
}

impl Task {
    /// The five tasks in LibAUC's order.
    pub const ALL: [Task; 5] = [
        Task::Cardiomegaly,
        Task::Edema,
        Task::Consolidation,
        Task::Atelectasis,
        Task::PleuralEffusion,
    ];

    /// The column name.
    pub fn column(self) -> &'static str {
        match self {
            Task::Cardiomegaly => "Cardiomegaly",
            Task::Edema => "Edema",
            Task::Consolidation => "Consolidation",
            Task::Atelectasis => "Atelectasis",
            Task::PleuralEffusion => "Pleural Effusion",
        }
    }

    fn observation(self) -> usize {
        OBSERVATIONS
            .iter()
            .position(|&o| o == self.column())
            .expect("every task is an observation")
    }

    /// LibAUC's policy for this task's uncertain labels.
    pub fn default_policy(self) -> Uncertain {
        match self {
            Task::Edema | Task::Atelectasis => Uncertain::Ones,
            _ => Uncertain::Zeros,
        }
    }
}

impl std::str::FromStr for Task {
    type Err = DataError;
    fn from_str(s: &str) -> Result<Self, DataError> {
        let key: String = s
            .chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
            .to_lowercase();
        Task::ALL
            .into_iter()
            .find(|t| t.column().replace(' ', "").to_lowercase() == key)
            .ok_or_else(|| {
                DataError::invalid(
                    "CheXpert",
                    format!("unknown task '{s}': use cardiomegaly, edema, consolidation, atelectasis or pleural-effusion"),
                )
            })
    }
}

/// What an uncertain (-1) label becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Uncertain {
    /// Positive (U-Ones).
    Ones,
    /// Negative (U-Zeros).
    Zeros,
    /// The image is left out of this task (U-Ignore; single-task sets only).
    Ignore,
}

/// One row of a CheXpert CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Path as written in the file (`CheXpert-v1.0-small/train/patient.../view1_frontal.jpg`).
    pub path: String,
    /// Sex as written.
    pub sex: String,
    /// Age in years.
    pub age: Option<f32>,
    /// Frontal (true) or lateral view.
    pub frontal: bool,
    /// AP/PA as written (blank for lateral views).
    pub ap_pa: String,
    /// The 14 observations: Some(1), Some(0), Some(-1) or None for blank.
    pub labels: [Option<i8>; 14],
}

fn parse_label(v: &str) -> Option<Result<i8, ()>> {
    match v.trim() {
        "" => None,
        "1.0" | "1" => Some(Ok(1)),
        "0.0" | "0" => Some(Ok(0)),
        "-1.0" | "-1" => Some(Ok(-1)),
        _ => Some(Err(())),
    }
}

/// The physical line (from 1) of a CSV error, where the reader knows it.
fn csv_error(path: &Path, e: &csv::Error, fallback: usize) -> DataError {
    let line = e.position().map_or(fallback, |p| p.line() as usize);
    let message = match e.kind() {
        csv::ErrorKind::Io(io) => io.to_string(),
        _ => e.to_string(),
    };
    DataError::parse(path, line, message)
}

/// Read a CheXpert CSV file (UTF-8 text). Line numbers in errors are physical lines of the
/// file, counted from 1 (a quoted field may span several).
///
/// # Errors
/// [`DataError::Io`], [`DataError::NotUtf8`]; [`DataError::Parse`] naming the line for a
/// header that is not CheXpert's, a row with missing columns, an unknown label value, a
/// Frontal/Lateral value other than those two, or an age that is neither blank nor a finite
/// number.
pub fn read_csv(path: &Path) -> Result<Vec<Record>, DataError> {
    let text = crate::text::read_text(path)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| csv_error(path, &e, 1))?
        .clone();
    let expected: Vec<&str> = ["Path", "Sex", "Age", "Frontal/Lateral", "AP/PA"]
        .into_iter()
        .chain(OBSERVATIONS)
        .collect();
    let got: Vec<&str> = header.iter().collect();
    if got != expected {
        let missing: Vec<&str> = expected
            .iter()
            .copied()
            .filter(|c| !got.contains(c))
            .collect();
        let unknown: Vec<&str> = got
            .iter()
            .copied()
            .filter(|c| !expected.contains(c))
            .collect();
        let detail = match (missing.is_empty(), unknown.is_empty()) {
            (true, true) => "its columns are in another order".to_string(),
            _ => format!("missing columns {missing:?}, unknown columns {unknown:?}"),
        };
        return Err(DataError::parse(
            path,
            1,
            format!(
                "the header is not CheXpert's: {detail} ({} columns expected: {})",
                expected.len(),
                expected.join(",")
            ),
        ));
    }
    let mut out = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| csv_error(path, &e, i + 2))?;
        let line = row.position().map_or(i + 2, |p| p.line() as usize);
        if row.len() != expected.len() {
            return Err(DataError::parse(
                path,
                line,
                format!("{} columns, expected {}", row.len(), expected.len()),
            ));
        }
        let mut labels = [None; 14];
        for (k, label) in labels.iter_mut().enumerate() {
            let v = &row[5 + k];
            *label = match parse_label(v) {
                None => None,
                Some(Ok(l)) => Some(l),
                Some(Err(())) => {
                    return Err(DataError::parse(
                        path,
                        line,
                        format!("unknown label value '{v}' for {}", OBSERVATIONS[k]),
                    ));
                }
            };
        }
        let frontal = match &row[3] {
            "Frontal" => true,
            "Lateral" => false,
            other => {
                return Err(DataError::parse(
                    path,
                    line,
                    format!("Frontal/Lateral is '{other}'"),
                ));
            }
        };
        let age = match row[2].trim() {
            "" => None,
            a => Some(
                a.parse::<f32>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        DataError::parse(path, line, format!("Age '{a}' is not a number"))
                    })?,
            ),
        };
        out.push(Record {
            path: row[0].to_string(),
            sex: row[1].to_string(),
            age,
            frontal,
            ap_pa: row[4].to_string(),
            labels,
        });
    }
    Ok(out)
}

/// Which rows and labels make a data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChexpertConfig {
    /// The tasks, one (a binary task) or several (multi-label).
    pub tasks: Vec<Task>,
    /// Policy per task, in the order of `tasks` (default: [`Task::default_policy`]).
    pub policies: Vec<Uncertain>,
    /// Keep frontal views only.
    pub frontal_only: bool,
}

impl ChexpertConfig {
    /// One task with LibAUC's policy, frontal views only.
    pub fn single(task: Task) -> Self {
        ChexpertConfig {
            tasks: vec![task],
            policies: vec![task.default_policy()],
            frontal_only: true,
        }
    }

    /// The five tasks with LibAUC's policies, frontal views only.
    pub fn five_tasks() -> Self {
        ChexpertConfig {
            tasks: Task::ALL.to_vec(),
            policies: Task::ALL.iter().map(|t| t.default_policy()).collect(),
            frontal_only: true,
        }
    }
}

/// A CheXpert data set: image paths and 0/1 labels per task. Sample `i` has id `i`; `row[i]`
/// is its 0-based row in the CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Chexpert {
    /// The folder holding `CheXpert-v1.0-small/` (or that folder itself).
    pub root: PathBuf,
    /// The tasks, in label order.
    pub tasks: Vec<Task>,
    /// Image paths as written in the CSV.
    pub paths: Vec<String>,
    /// Labels, `tasks.len()` per sample (0 or 1).
    pub labels: Vec<u8>,
    /// CSV row of each sample.
    pub row: Vec<usize>,
}

impl Chexpert {
    /// Build a data set from CSV records.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when `policies` and `tasks` differ in length, `Ignore` is used
    /// with several tasks, or a task has no positive or no negative left.
    pub fn from_records(
        root: &Path,
        records: &[Record],
        cfg: &ChexpertConfig,
    ) -> Result<Chexpert, DataError> {
        if cfg.tasks.is_empty() || cfg.policies.len() != cfg.tasks.len() {
            return Err(DataError::invalid(
                "CheXpert",
                "give one uncertain-label policy per task (and at least one task)",
            ));
        }
        if cfg.tasks.len() > 1 && cfg.policies.contains(&Uncertain::Ignore) {
            return Err(DataError::invalid(
                "CheXpert",
                "the Ignore policy needs a single task",
            ));
        }
        let mut set = Chexpert {
            root: root.to_path_buf(),
            tasks: cfg.tasks.clone(),
            paths: Vec::new(),
            labels: Vec::new(),
            row: Vec::new(),
        };
        'rows: for (r, rec) in records.iter().enumerate() {
            if cfg.frontal_only && !rec.frontal {
                continue;
            }
            let mut ys = Vec::with_capacity(cfg.tasks.len());
            for (t, p) in cfg.tasks.iter().zip(&cfg.policies) {
                let y = match (rec.labels[t.observation()], p) {
                    (Some(1), _) | (Some(-1), Uncertain::Ones) => 1,
                    (Some(-1), Uncertain::Ignore) => continue 'rows,
                    _ => 0,
                };
                ys.push(y);
            }
            set.paths.push(rec.path.clone());
            set.labels.extend(ys);
            set.row.push(r);
        }
        for (k, t) in cfg.tasks.iter().enumerate() {
            let pos = set.positives(k);
            if pos == 0 || pos == set.len() {
                return Err(DataError::invalid(
                    "CheXpert",
                    format!(
                        "{} has {pos} positives among {} images after filtering",
                        t.column(),
                        set.len()
                    ),
                ));
            }
        }
        Ok(set)
    }

    /// Read `train.csv` or `valid.csv` under `root` (the folder that holds
    /// `CheXpert-v1.0-small/`, or that folder itself).
    ///
    /// # Errors
    /// [`DataError::Invalid`] saying what to download when the CSV is missing; as
    /// [`read_csv`] and [`Chexpert::from_records`].
    pub fn open(root: &Path, csv_name: &str, cfg: &ChexpertConfig) -> Result<Chexpert, DataError> {
        let candidates = [
            root.join(csv_name),
            root.join("CheXpert-v1.0-small").join(csv_name),
        ];
        let Some(csv) = candidates.iter().find(|p| p.is_file()) else {
            return Err(DataError::invalid(
                root.display().to_string(),
                format!(
                    "{csv_name} not found: download CheXpert-v1.0-small from https://stanfordmlgroup.github.io/competitions/chexpert/ and pass the folder that contains it (or CheXpert-v1.0-small/ itself)"
                ),
            ));
        };
        Chexpert::from_records(root, &read_csv(csv)?, cfg)
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Positives of task `k` (index into `tasks`).
    pub fn positives(&self, k: usize) -> usize {
        let t = self.tasks.len();
        (0..self.len())
            .filter(|&i| self.labels[i * t + k] == 1)
            .count()
    }

    /// The labels of sample `i`.
    pub fn label(&self, i: usize) -> &[u8] {
        let t = self.tasks.len();
        &self.labels[i * t..(i + 1) * t]
    }

    /// Where the image of sample `i` lies: `root/<path>`, or `root/<path without its first
    /// component>` when `root` is `CheXpert-v1.0-small/` itself.
    pub fn image_path(&self, i: usize) -> PathBuf {
        let p = Path::new(&self.paths[i]);
        let direct = self.root.join(p);
        if direct.is_file() {
            return direct;
        }
        let mut comps = p.components();
        comps.next();
        self.root.join(comps.as_path())
    }

    /// Decode and transform the image of sample `i` (`3 x size x size` values).
    ///
    /// # Errors
    /// [`DataError::Image`] naming the file.
    pub fn image<R: rand::Rng>(
        &self,
        i: usize,
        transform: &XrayTransform,
        rng: &mut R,
    ) -> Result<Vec<f32>, DataError> {
        transform.load(&self.image_path(i), rng)
    }

    /// The samples at `idx`, in that order, as a new set (ids become positions in it).
    pub fn subset(&self, idx: &[usize]) -> Chexpert {
        let t = self.tasks.len();
        Chexpert {
            root: self.root.clone(),
            tasks: self.tasks.clone(),
            paths: idx.iter().map(|&i| self.paths[i].clone()).collect(),
            labels: idx
                .iter()
                .flat_map(|&i| self.labels[i * t..(i + 1) * t].iter().copied())
                .collect(),
            row: idx.iter().map(|&i| self.row[i]).collect(),
        }
    }

    /// Seeded random split into training and validation sets, `train_fraction` of the images
    /// (rounded down) for training (the pAUC paper uses 0.9).
    ///
    /// # Errors
    /// [`DataError::Invalid`] for a fraction outside (0, 1) or an empty side.
    pub fn split(&self, train_fraction: f64, seed: u64) -> Result<(Chexpert, Chexpert), DataError> {
        let n_train = (self.len() as f64 * train_fraction) as usize;
        if !(train_fraction > 0.0 && train_fraction < 1.0) || n_train == 0 || n_train == self.len()
        {
            return Err(DataError::invalid(
                "CheXpert",
                format!("train fraction {train_fraction} leaves an empty side"),
            ));
        }
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.shuffle(&mut StdRng::seed_from_u64(seed));
        let (a, b) = idx.split_at(n_train);
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.sort_unstable();
        b.sort_unstable();
        Ok((self.subset(&a), self.subset(&b)))
    }
}
