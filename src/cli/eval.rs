//! `rankrisk eval`: score a trained model of a run folder (`rankrisk train`, or the cifar_lt /
//! chexpert examples) on the run's test or validation set; writes `eval_{split}.json` and
//! `roc_{split}.png`.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::tensor::Device;

use rankrisk::experiments::args::ImageArgs;
use rankrisk::experiments::plan::{Run, read_config};
use rankrisk::tasks::{ImageTask, seeded_device};
use rankrisk::train::run::BackendArg;
use rankrisk::train::run::{EvalReport, evaluate_model};

use super::output::outln;

/// Which set to score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Split {
    /// The run's test set.
    Test,
    /// The run's validation set.
    Val,
}

/// Arguments of `rankrisk eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// Output folder of an image run of `rankrisk train` or of the cifar_lt / chexpert
    /// examples (it holds config.toml and best.bpk).
    pub run_dir: PathBuf,
    /// Model weights to score (default: RUN_DIR/best.bpk, the best model by validation pAUC).
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// The set to score.
    #[arg(long, value_enum, default_value = "test")]
    pub split: Split,
    /// Where to write the metrics and the ROC plot (default: RUN_DIR).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Backend (default: the run's).
    #[command(flatten)]
    pub backend: BackendArg,
}

/// Score the checkpoint and print its AUC and pAUC.
///
/// # Errors
/// A message for a folder without config.toml, a tabular run, a checkpoint that does not fit
/// the run's model, missing data or an unwritable output folder.
pub fn run(args: &EvalArgs) -> Result<(), String> {
    let report = evaluate(args)?;
    outln!(
        "{} set ({} samples, {} positive): AUC {:.4}, pAUC[{}, {}] {:.4}",
        report.split,
        report.samples,
        report.positives,
        report.auc,
        report.alpha,
        report.beta,
        report.pauc
    )?;
    for t in &report.tasks {
        outln!(
            "  {}: {} positive, AUC {:.4}, pAUC {:.4}",
            t.task,
            t.positives,
            t.auc,
            t.pauc
        )?;
    }
    outln!(
        "wrote eval_{0}.json and roc_{0}.png in {1}",
        report.split,
        args.out.as_ref().unwrap_or(&args.run_dir).display()
    )?;
    Ok(())
}

/// [`run`] without the printing.
///
/// # Errors
/// As [`run`].
pub fn evaluate(args: &EvalArgs) -> Result<EvalReport, String> {
    let config = args.run_dir.join("config.toml");
    if !config.is_file() {
        return Err(format!(
            "{} not found: RUN_DIR must be the output folder of an image run (rankrisk train, or the cifar_lt / chexpert examples)",
            config.display()
        ));
    }
    let mut runs = read_config(&config)?;
    let Some(mut run) = runs.pop().filter(|_| runs.is_empty()) else {
        return Err(format!("{}: expected exactly one run", config.display()));
    };
    let checkpoint = args
        .checkpoint
        .clone()
        .unwrap_or_else(|| args.run_dir.join("best.bpk"));
    let out = args.out.clone().unwrap_or_else(|| args.run_dir.clone());
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let training = match &mut run {
        Run::LongTailed(a) => &mut a.training,
        Run::Chexpert(a) => &mut a.training,
        Run::Tabular(_) => return Err("a tabular run has no model checkpoint to score".into()),
    };
    if args.backend.backend.is_some() {
        training.backend = args.backend.clone();
    }
    let backend = training.backend.resolve().map_err(|x| e(&x))?;
    let device = seeded_device(backend, training.seed).map_err(|x| e(&x))?;
    let target = Target {
        checkpoint: &checkpoint,
        split: args.split,
        out: &out,
        range: (training.alpha, training.beta),
        device: &device,
    };
    match &run {
        Run::LongTailed(a) => target.score(&a.task()),
        Run::Chexpert(a) => target.score(&a.task()),
        Run::Tabular(_) => unreachable!("refused above"),
    }
}

/// What to score and where to write.
struct Target<'a> {
    checkpoint: &'a Path,
    split: Split,
    out: &'a Path,
    range: (f64, f64),
    device: &'a Device,
}

impl Target<'_> {
    /// Build the task's sets and model, load the checkpoint into the model and score the
    /// chosen set.
    fn score<T: ImageTask>(&self, task: &T) -> Result<EvalReport, String> {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        let sets = task.build().map_err(|x| e(&x))?;
        let model = task.model(&sets, self.device).map_err(|x| e(&x))?;
        let model = rankrisk_models::checkpoint::load(model, self.checkpoint)
            .map_err(|x| e(&x))?
            .valid();
        let (source, name) = match self.split {
            Split::Test => (&sets.test, "test"),
            Split::Val => (&sets.val, "val"),
        };
        evaluate_model(
            &model,
            source,
            self.device,
            self.range,
            self.checkpoint,
            name,
            self.out,
        )
        .map_err(|e| e.to_string())
    }
}
