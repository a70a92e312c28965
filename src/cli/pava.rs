//! `rankrisk pava`: problem (10) of the rank-based paper solved by the refined PAVA for one
//! JSON input (docs/GUIDE.md gives the format).

use clap::Args;

use rankrisk::math::loss::Loss;
use rankrisk::math::pava;
use rankrisk::math::spec::SpecError;
use rankrisk::math::weights::Weights;

use super::output::outln;

/// Arguments of `rankrisk pava`.
#[derive(Debug, Args)]
pub struct PavaArgs {
    /// JSON file `{"m": [...], "loss": "logistic", "weights": {"kind": "cvar", "q": 0.8}, "rho": 1.0}`;
    /// `-` reads standard input.
    #[arg(long)]
    pub input: std::path::PathBuf,
}

/// The JSON input of `rankrisk pava`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PavaInput {
    m: Vec<f64>,
    loss: String,
    weights: Weights,
    rho: f64,
}

/// The JSON output of `rankrisk pava`.
#[derive(Debug, serde::Serialize)]
struct PavaOutput {
    z: Vec<f64>,
    objective: f64,
    blocks: usize,
    merges: usize,
    solver_iterations: u64,
}

/// Solve the z-subproblem of the JSON input and print the solution.
///
/// # Errors
/// A message for unreadable or malformed input, invalid weights or loss, or an overflow.
pub fn run(args: &PavaArgs) -> Result<(), String> {
    let text = if args.input.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| format!("reading standard input: {e}"))?
    } else {
        std::fs::read_to_string(&args.input).map_err(|e| {
            format!(
                "cannot read {}: {e}; expected a JSON object such as {{\"m\": [0.3, -1.2], \
                     \"loss\": \"logistic\", \"weights\": {{\"kind\": \"cvar\", \"q\": 0.5}}, \
                     \"rho\": 1.0}} (docs/GUIDE.md, \"rankrisk pava\"), or `-` for standard input",
                args.input.display()
            )
        })?
    };
    let input: PavaInput =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let loss: Loss = input.loss.parse().map_err(|e: SpecError| e.to_string())?;
    let sigma = input
        .weights
        .sigma(input.m.len())
        .map_err(|e| e.to_string())?;
    let (z, stats) =
        pava::solve(&loss, &sigma, input.rho, &input.m).map_err(|e| format!("pava: {e}"))?;
    let objective = pava::objective(&loss, &sigma, input.rho, &input.m, &z);
    if !objective.is_finite() {
        return Err(format!(
            "{}: the objective of problem (10) is {objective} at the solution: the losses or \
             rho/2 ||z - m||^2 exceed the floating-point range at this scale (rescale m or rho)",
            args.input.display()
        ));
    }
    let out = PavaOutput {
        objective,
        z,
        blocks: stats.blocks,
        merges: stats.merges,
        solver_iterations: stats.solver_iterations,
    };
    outln!(
        "{}",
        serde_json::to_string(&out).map_err(|e| e.to_string())?
    )?;
    Ok(())
}
