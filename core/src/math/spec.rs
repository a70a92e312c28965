//! The text specifications of an objective's parts, as the command line and configs write them:
//! individual losses (`smooth-hinge:delta=0.5`), rank weights (`cvar:q=0.8`, eq. (3)-(6) of
//! the rank-based paper), regularizers (`enet:0.1,0.01`, eq. (7)-(8)), pairwise surrogates of
//! the pAUC paper (`logistic`) and ADMM penalty schedules (`balanced:0.01,10,2`, Table 6).
//! What they share: the two argument forms (`key=value` pairs, a comma list of numbers) and
//! [`SpecError`], the one error of parsing or checking any of them.

use std::fmt;
use std::str::FromStr;

/// Which kind of specification an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecKind {
    /// An individual loss `l` ([`crate::math::loss::Loss`]).
    Loss,
    /// Rank weights `sigma` ([`crate::math::weights::Weights`]).
    Weights,
    /// A regularizer `g` ([`crate::math::regularizer::Regularizer`]).
    Regularizer,
    /// A pairwise surrogate of the pAUC objective ([`crate::pauc::objective::PairLoss`]).
    PairLoss,
    /// An ADMM penalty schedule ([`crate::admm::schedule::RhoSchedule`]).
    RhoSchedule,
}

impl fmt::Display for SpecKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecKind::Loss => "loss",
            SpecKind::Weights => "weights",
            SpecKind::Regularizer => "regularizer",
            SpecKind::PairLoss => "pairwise surrogate",
            SpecKind::RhoSchedule => "rho schedule",
        })
    }
}

/// Why a specification was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// The name is none of the known families.
    #[error("invalid {kind}: unknown {kind} '{name}': expected {expected}")]
    Unknown {
        /// The kind of specification.
        kind: SpecKind,
        /// The name given.
        name: String,
        /// The names accepted.
        expected: &'static str,
    },
    /// A parameter that is not `key=value`, not a number, missing, unknown, or a list of
    /// numbers of the wrong length.
    #[error("invalid {kind}: {family}: {problem}")]
    Syntax {
        /// The kind of specification.
        kind: SpecKind,
        /// The family (`cvar`, `enet`, ...).
        family: String,
        /// What is wrong with the text.
        problem: String,
    },
    /// A parameter outside its allowed range (for rank weights, possibly given the number of
    /// samples: `k <= n`).
    #[error("invalid {kind}: {family} needs {requirement}, got {got}")]
    OutOfRange {
        /// The kind of specification.
        kind: SpecKind,
        /// The family (`cvar`, `mcp`, ...).
        family: &'static str,
        /// The allowed range (`q in [0, 1)`).
        requirement: &'static str,
        /// The values given.
        got: String,
    },
}

/// `Ok(())` if `ok`, else [`SpecError::OutOfRange`] with `got` formatted lazily.
///
/// # Errors
/// [`SpecError::OutOfRange`] unless `ok`.
pub fn require(
    ok: bool,
    kind: SpecKind,
    family: &'static str,
    requirement: &'static str,
    got: impl FnOnce() -> String,
) -> Result<(), SpecError> {
    if ok {
        Ok(())
    } else {
        Err(SpecError::OutOfRange {
            kind,
            family,
            requirement,
            got: got(),
        })
    }
}

/// The `key=value` pairs of a specification like `aorr:m=20,k=70`.
#[derive(Debug)]
pub struct Params<'a> {
    kind: SpecKind,
    family: &'a str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Params<'a> {
    /// The pairs of `text` (what follows `family:`).
    ///
    /// # Errors
    /// [`SpecError::Syntax`] for an item that is not `key=value`.
    pub fn parse(kind: SpecKind, family: &'a str, text: &'a str) -> Result<Self, SpecError> {
        let mut pairs = Vec::new();
        for item in text.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| syntax(kind, family, format!("'{item}' is not key=value")))?;
            pairs.push((k.trim(), v.trim()));
        }
        Ok(Params {
            kind,
            family,
            pairs,
        })
    }

    /// The value of `key`, or `default` when it is absent.
    ///
    /// # Errors
    /// [`SpecError::Syntax`] when the value does not parse or a key without default is absent.
    pub fn get<T: FromStr>(&self, key: &str, default: Option<T>) -> Result<T, SpecError> {
        match self.pairs.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => v.parse().map_err(|_| {
                syntax(
                    self.kind,
                    self.family,
                    format!("{key} = '{v}' is not a valid number"),
                )
            }),
            None => default
                .ok_or_else(|| syntax(self.kind, self.family, format!("missing parameter {key}"))),
        }
    }

    /// Refuse any key outside `keys`.
    ///
    /// # Errors
    /// [`SpecError::Syntax`] naming the first unknown key.
    pub fn only(&self, keys: &[&str]) -> Result<(), SpecError> {
        match self.pairs.iter().find(|(k, _)| !keys.contains(k)) {
            Some((k, _)) => Err(syntax(
                self.kind,
                self.family,
                format!("unknown parameter '{k}' (expected {})", keys.join(", ")),
            )),
            None => Ok(()),
        }
    }
}

/// The comma-separated numbers of a specification like `enet:0.1,0.01` (`args` is what follows
/// `family:`; empty items are skipped).
///
/// # Errors
/// [`SpecError::Syntax`] naming the item that is not a number.
pub fn numbers(kind: SpecKind, family: &str, args: &str) -> Result<Vec<f64>, SpecError> {
    args.split(',')
        .filter(|a| !a.trim().is_empty())
        .map(|a| {
            a.trim()
                .parse::<f64>()
                .map_err(|_| syntax(kind, family, format!("'{}' is not a number", a.trim())))
        })
        .collect()
}

/// [`SpecError::Syntax`] unless `family` was given `want` numbers.
///
/// # Errors
/// [`SpecError::Syntax`] naming the count wanted and the text given.
pub fn count(
    kind: SpecKind,
    family: &str,
    nums: &[f64],
    want: usize,
    args: &str,
) -> Result<(), SpecError> {
    if nums.len() == want {
        Ok(())
    } else {
        Err(syntax(
            kind,
            family,
            format!("takes {want} number(s), got '{args}'"),
        ))
    }
}

fn syntax(kind: SpecKind, family: &str, problem: String) -> SpecError {
    SpecError::Syntax {
        kind,
        family: family.to_string(),
        problem,
    }
}
