//! Synthetic binary classification data in the spirit of scikit-learn's
//! `make_classification` (the generator behind the rank-based paper's synthetic sets):
//! Gaussian clusters placed on the vertices of a hypercube in the informative subspace,
//! redundant features as random linear combinations of the informative ones, pure-noise
//! features, and a fraction of labels flipped.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::error::DataError;
use crate::memory::check_dense;
use crate::tabular::Tabular;

/// Settings of [`make_classification`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SyntheticConfig {
    /// Number of samples.
    pub n: usize,
    /// Total number of features.
    pub d: usize,
    /// Informative features (the clusters live in this subspace).
    pub informative: usize,
    /// Redundant features (linear combinations of the informative ones).
    pub redundant: usize,
    /// Clusters per class.
    pub clusters_per_class: usize,
    /// Half the side of the hypercube whose vertices hold the cluster centres.
    pub class_sep: f64,
    /// Fraction of labels assigned at random.
    pub flip_y: f64,
    /// Seed.
    pub seed: u64,
}

impl SyntheticConfig {
    /// scikit-learn's defaults for `n` samples and `d` features: 2 informative, 2 redundant,
    /// 2 clusters per class, class_sep 1, flip_y 0.01.
    pub fn new(n: usize, d: usize, seed: u64) -> Self {
        SyntheticConfig {
            n,
            d,
            informative: 2.min(d),
            redundant: 2.min(d.saturating_sub(2)),
            clusters_per_class: 2,
            class_sep: 1.0,
            flip_y: 0.01,
            seed,
        }
    }
}

/// Parse `synthetic[:n=N,d=D,informative=K,redundant=R,clusters=C,sep=S,flip=F,seed=SEED]`
/// (defaults: n 1000, d 20, the rest as [`SyntheticConfig::new`]).
///
/// # Errors
/// [`DataError::Invalid`] for an unknown key or a bad number.
pub fn parse_spec(spec: &str) -> Result<SyntheticConfig, DataError> {
    let params = spec.split_once(':').map_or("", |(_, p)| p);
    let mut cfg = SyntheticConfig::new(1000, 20, 0);
    let mut informative = None;
    let mut redundant = None;
    for item in params.split(',').filter(|s| !s.trim().is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| DataError::invalid("synthetic", format!("'{item}' is not key=value")))?;
        let bad = || {
            DataError::invalid(
                "synthetic",
                format!("{key} = '{value}' is not a valid number"),
            )
        };
        let int = || value.trim().parse::<usize>().map_err(|_| bad());
        let float = || value.trim().parse::<f64>().map_err(|_| bad());
        match key.trim() {
            "n" => cfg.n = int()?,
            "d" => cfg.d = int()?,
            "informative" => informative = Some(int()?),
            "redundant" => redundant = Some(int()?),
            "clusters" => cfg.clusters_per_class = int()?,
            "sep" => cfg.class_sep = float()?,
            "flip" => cfg.flip_y = float()?,
            "seed" => cfg.seed = value.trim().parse::<u64>().map_err(|_| bad())?,
            other => {
                return Err(DataError::invalid(
                    "synthetic",
                    format!(
                        "unknown parameter '{other}' (n, d, informative, redundant, clusters, sep, flip, seed)"
                    ),
                ));
            }
        }
    }
    let defaults = SyntheticConfig::new(cfg.n, cfg.d, cfg.seed);
    cfg.informative = informative.unwrap_or(defaults.informative);
    cfg.redundant = redundant.unwrap_or(defaults.redundant);
    Ok(cfg)
}

fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Generate the data set (labels in {-1, +1}, rows shuffled).
///
/// # Errors
/// [`DataError::Invalid`] when the counts do not fit (`informative + redundant > d`,
/// `2 * clusters_per_class > 2^informative`, `n < 2`, `flip_y` outside [0, 1], `class_sep` not
/// finite); [`DataError::TooLarge`] when the table (`n x d`, with 4 values per row of
/// bookkeeping) or the clusters' covariance factors do not fit in memory.
pub fn make_classification(cfg: &SyntheticConfig) -> Result<Tabular, DataError> {
    let name = "synthetic";
    let k = cfg.informative;
    let used = k.checked_add(cfg.redundant);
    if cfg.n < 2 || cfg.d == 0 || k == 0 || used.is_none_or(|u| u > cfg.d) {
        return Err(DataError::invalid(
            name,
            format!(
                "need n >= 2 and 1 <= informative + redundant <= d, got n = {}, d = {}, informative = {k}, redundant = {}",
                cfg.n, cfg.d, cfg.redundant
            ),
        ));
    }
    let clusters = cfg.clusters_per_class.saturating_mul(2);
    if cfg.clusters_per_class == 0 || (k < 63 && clusters > 1usize << k) {
        return Err(DataError::invalid(
            name,
            format!(
                "{} clusters per class need more than {k} informative features",
                cfg.clusters_per_class
            ),
        ));
    }
    if !(0.0..=1.0).contains(&cfg.flip_y) {
        return Err(DataError::invalid(
            name,
            format!("flip_y must be in [0, 1], got {}", cfg.flip_y),
        ));
    }
    if !cfg.class_sep.is_finite() {
        return Err(DataError::invalid(
            name,
            format!("class_sep must be finite, got {}", cfg.class_sep),
        ));
    }
    // Every size taken from the settings is checked before anything is allocated: the table
    // (n x d features, and per row a label, a shuffle position and a flag), the clusters'
    // k x k covariance factors, the redundant features' mixing matrix.
    let cols = cfg.d.saturating_add(4);
    check_dense(
        cfg.n,
        cols,
        8,
        "synthetic set (n x (d + 4): features and 4 values per row)",
    )?;
    let kk = k.saturating_mul(k);
    check_dense(
        clusters,
        kk,
        8,
        "synthetic set (clusters x informative^2 covariance factors)",
    )?;
    check_dense(
        k,
        cfg.redundant,
        8,
        "synthetic set (informative x redundant mixing)",
    )?;
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    // Distinct hypercube vertices as cluster centres, each with a random covariance factor.
    let mut vertices: Vec<u64> = Vec::with_capacity(clusters);
    let mut seen = std::collections::HashSet::with_capacity(clusters);
    while vertices.len() < clusters {
        let v: u64 = rng.random::<u64>() & if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
        if seen.insert(v) {
            vertices.push(v);
        }
    }
    let centres: Vec<Vec<f64>> = vertices
        .iter()
        .map(|&v| {
            (0..k)
                .map(|j| {
                    if (v >> (j % 64)) & 1 == 1 {
                        cfg.class_sep
                    } else {
                        -cfg.class_sep
                    }
                })
                .collect()
        })
        .collect();
    let factors: Vec<Vec<f64>> = (0..clusters)
        .map(|_| (0..kk).map(|_| 2.0 * rng.random::<f64>() - 1.0).collect())
        .collect();
    let mixing: Vec<f64> = (0..k * cfg.redundant)
        .map(|_| 2.0 * rng.random::<f64>() - 1.0)
        .collect();
    let mut x = Vec::with_capacity(cfg.n * cfg.d);
    let mut y = Vec::with_capacity(cfg.n);
    for i in 0..cfg.n {
        let c = i % clusters;
        let z: Vec<f64> = (0..k).map(|_| normal(&mut rng)).collect();
        let informative: Vec<f64> = (0..k)
            .map(|a| centres[c][a] + (0..k).map(|b| factors[c][a * k + b] * z[b]).sum::<f64>())
            .collect();
        x.extend_from_slice(&informative);
        for r in 0..cfg.redundant {
            x.push(
                (0..k)
                    .map(|a| mixing[a * cfg.redundant + r] * informative[a])
                    .sum(),
            );
        }
        for _ in k + cfg.redundant..cfg.d {
            x.push(normal(&mut rng));
        }
        let mut label = if c.is_multiple_of(2) { 1.0 } else { -1.0 };
        if rng.random::<f64>() < cfg.flip_y && rng.random::<bool>() {
            label = -label;
        }
        y.push(label);
    }
    let mut order: Vec<usize> = (0..cfg.n).collect();
    order.shuffle(&mut rng);
    // Row i of the set is generated row order[i], permuted in place (no second copy).
    permute_rows(&mut x, cfg.d, &order);
    let y = order.iter().map(|&i| y[i]).collect();
    Tabular::new(name, cfg.d, x, y, None)
}

/// Rearrange the rows of `x` (rows of `d` values) so that row `i` becomes the old row
/// `order[i]`; `order` is a permutation. One row of scratch space.
fn permute_rows(x: &mut [f64], d: usize, order: &[usize]) {
    let mut done = vec![false; order.len()];
    let mut saved = vec![0.0; d];
    for start in 0..order.len() {
        if done[start] {
            continue;
        }
        saved.copy_from_slice(&x[start * d..(start + 1) * d]);
        let mut i = start;
        loop {
            done[i] = true;
            let from = order[i];
            if from == start {
                x[i * d..(i + 1) * d].copy_from_slice(&saved);
                break;
            }
            x.copy_within(from * d..(from + 1) * d, i * d);
            i = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_balance_and_determinism() {
        let cfg = SyntheticConfig::new(1000, 20, 7);
        let a = make_classification(&cfg).unwrap();
        assert_eq!((a.n(), a.d), (1000, 20));
        let pos = a.positives();
        assert!((450..=550).contains(&pos), "{pos}");
        assert_eq!(a, make_classification(&cfg).unwrap());
        assert_ne!(
            a,
            make_classification(&SyntheticConfig {
                seed: 8,
                ..cfg.clone()
            })
            .unwrap()
        );
        // redundant features are exact linear combinations of the informative ones: the
        // 4 first columns have rank 2
        let row = |i: usize| a.row(i)[..4].to_vec();
        let (r0, r1, r2) = (row(0), row(1), row(2));
        let det = |p: &[f64], q: &[f64]| p[0] * q[1] - p[1] * q[0];
        // express r2 in the basis (r0, r1) on the first two coordinates, check columns 3-4
        let dd = det(&r0, &r1);
        let alpha = det(&r2, &r1) / dd;
        let beta = det(&r0, &r2) / dd;
        for j in 2..4 {
            assert!((alpha * r0[j] + beta * r1[j] - r2[j]).abs() < 1e-9);
        }
    }

    #[test]
    fn spec_parsing() {
        let c = parse_spec("synthetic:n=500,d=30,informative=5,redundant=3,seed=9").unwrap();
        assert_eq!(
            (c.n, c.d, c.informative, c.redundant, c.seed),
            (500, 30, 5, 3, 9)
        );
        assert_eq!(
            parse_spec("synthetic").unwrap(),
            SyntheticConfig::new(1000, 20, 0)
        );
        assert!(parse_spec("synthetic:n=abc").is_err());
        assert!(parse_spec("synthetic:depth=3").is_err());
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(
            make_classification(&SyntheticConfig {
                informative: 1,
                ..SyntheticConfig::new(10, 5, 0)
            })
            .is_err()
        );
        assert!(
            make_classification(&SyntheticConfig {
                redundant: 9,
                ..SyntheticConfig::new(10, 5, 0)
            })
            .is_err()
        );
        assert!(make_classification(&SyntheticConfig::new(1, 5, 0)).is_err());
        assert!(
            make_classification(&SyntheticConfig {
                redundant: usize::MAX,
                ..SyntheticConfig::new(10, 5, 0)
            })
            .is_err()
        );
        assert!(
            make_classification(&SyntheticConfig {
                clusters_per_class: usize::MAX,
                ..SyntheticConfig::new(10, 5, 0)
            })
            .is_err()
        );
    }

    #[test]
    fn huge_sizes_are_errors_naming_the_size() {
        let msg = make_classification(&parse_spec("synthetic:n=1000000000000,d=10").unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("synthetic set") && msg.contains("1000000000000 rows x 14 columns"),
            "{msg}"
        );
        let msg =
            make_classification(&parse_spec("synthetic:n=10,d=18446744073709551615").unwrap())
                .unwrap_err()
                .to_string();
        assert!(msg.contains("synthetic set"), "{msg}");
        // Wide informative subspaces: the covariance factors are checked too.
        let msg = make_classification(
            &parse_spec("synthetic:n=10,d=10000000,informative=10000000,redundant=0").unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("covariance factors"), "{msg}");
    }

    #[test]
    fn rows_are_permuted_in_place() {
        let mut x: Vec<f64> = (0..12).map(f64::from).collect();
        permute_rows(&mut x, 2, &[3, 0, 5, 1, 4, 2]);
        assert_eq!(
            x,
            vec![6.0, 7.0, 0.0, 1.0, 10.0, 11.0, 2.0, 3.0, 8.0, 9.0, 4.0, 5.0]
        );
    }
}
