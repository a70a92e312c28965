//! Samplers over sample ids. Each one is a pure function of its seed and position, so a run
//! resumed from a checkpoint (which stores the position) draws exactly the batches an
//! uninterrupted run would have drawn.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use serde::{Deserialize, Serialize};

/// A sampler that cannot be built from its settings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SamplerError {
    /// A class-balanced sampler over a set with one class only.
    #[error("sampler: {positives} positives and {negatives} negatives: both classes are needed")]
    OneClass {
        /// The positives in the set.
        positives: usize,
        /// The negatives in the set.
        negatives: usize,
    },
    /// Sizes the sampler cannot draw (the message names them and what they must be).
    #[error("sampler: {0}")]
    Sizes(String),
}

fn split_ids(positive: &[bool]) -> (Vec<usize>, Vec<usize>) {
    (0..positive.len()).partition(|&i| positive[i])
}

fn permutation(ids: &[usize], seed: u64, round: u64) -> Vec<usize> {
    let mut p = ids.to_vec();
    p.shuffle(&mut StdRng::seed_from_u64(
        seed ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15),
    ));
    p
}

/// Positive oversampling (as LibAUC's DualSampler): every batch holds
/// `round(pos_ratio * batch_size)` positives (at least one) and negatives for the rest. An
/// epoch is one pass over the negatives in a seeded random order; positives cycle through
/// seeded permutations of their own, so the rare class is seen many times per epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DualSampler {
    positives: Vec<usize>,
    negatives: Vec<usize>,
    batch_size: usize,
    per_batch_pos: usize,
    seed: u64,
    /// Batches drawn so far (the resumable position).
    pub step: u64,
}

impl DualSampler {
    /// A sampler over the samples labelled by `positive`.
    ///
    /// # Errors
    /// [`SamplerError::OneClass`] when a class is empty, [`SamplerError::Sizes`] when
    /// `batch_size < 2`, or `pos_ratio` is not
    /// in (0, 1).
    pub fn new(
        positive: &[bool],
        batch_size: usize,
        pos_ratio: f64,
        seed: u64,
    ) -> Result<Self, SamplerError> {
        let (positives, negatives) = split_ids(positive);
        if positives.is_empty() || negatives.is_empty() {
            return Err(SamplerError::OneClass {
                positives: positives.len(),
                negatives: negatives.len(),
            });
        }
        if batch_size < 2 || !(pos_ratio > 0.0 && pos_ratio < 1.0) {
            return Err(SamplerError::Sizes(format!(
                "batch size {batch_size} (>= 2) and positive ratio {pos_ratio} (in (0, 1))"
            )));
        }
        let per_batch_pos =
            ((pos_ratio * batch_size as f64).round() as usize).clamp(1, batch_size - 1);
        Ok(DualSampler {
            positives,
            negatives,
            batch_size,
            per_batch_pos,
            seed,
            step: 0,
        })
    }

    /// Samples per batch.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Batches per epoch (one pass over the negatives, the last batch may be short).
    pub fn batches_per_epoch(&self) -> usize {
        self.negatives
            .len()
            .div_ceil(self.batch_size - self.per_batch_pos)
    }

    /// Samples an epoch draws: each batch's positives and every negative once.
    pub fn samples_per_epoch(&self) -> usize {
        self.batches_per_epoch() * self.per_batch_pos + self.negatives.len()
    }

    /// The ids of the next batch (positives first).
    pub fn next_batch(&mut self) -> Vec<usize> {
        let per_neg = self.batch_size - self.per_batch_pos;
        let b = self.batches_per_epoch() as u64;
        let (epoch, k) = (self.step / b, (self.step % b) as usize);
        let negs = permutation(&self.negatives, self.seed, 2 * epoch);
        let neg = &negs[k * per_neg..((k + 1) * per_neg).min(negs.len())];
        let np = self.positives.len();
        let start = self.step as usize * self.per_batch_pos;
        let mut batch = Vec::with_capacity(self.batch_size);
        let mut cycle = None;
        let mut perm = Vec::new();
        for j in start..start + self.per_batch_pos {
            let c = (j / np) as u64;
            if cycle != Some(c) {
                perm = permutation(&self.positives, self.seed, 2 * c + 1);
                cycle = Some(c);
            }
            batch.push(perm[j % np]);
        }
        batch.extend_from_slice(neg);
        self.step += 1;
        batch
    }
}

/// Uniform batches (as a shuffled data loader): an epoch is one pass over every sample in a
/// seeded random order, cut into batches of `batch_size` (the last one may be short). For
/// multi-label training, where no single label can be balanced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShuffleSampler {
    n: usize,
    batch_size: usize,
    seed: u64,
    /// Batches drawn so far (the resumable position).
    pub step: u64,
}

impl ShuffleSampler {
    /// A sampler over `n` samples.
    ///
    /// # Errors
    /// [`SamplerError::Sizes`] for no samples or `batch_size < 1`.
    pub fn new(n: usize, batch_size: usize, seed: u64) -> Result<Self, SamplerError> {
        if n == 0 || batch_size == 0 {
            return Err(SamplerError::Sizes(format!(
                "{n} samples in batches of {batch_size}: both must be at least 1"
            )));
        }
        Ok(ShuffleSampler {
            n,
            batch_size,
            seed,
            step: 0,
        })
    }

    /// The ids of the next batch.
    pub fn next_batch(&mut self) -> Vec<usize> {
        let b = self.n.div_ceil(self.batch_size) as u64;
        let (epoch, k) = (self.step / b, (self.step % b) as usize);
        let all: Vec<usize> = (0..self.n).collect();
        let order = permutation(&all, self.seed, epoch);
        self.step += 1;
        order[k * self.batch_size..((k + 1) * self.batch_size).min(self.n)].to_vec()
    }
}

/// The training batches of a run: balanced by one label ([`DualSampler`]) or uniform
/// ([`ShuffleSampler`]). A checkpoint written before the uniform sampler existed holds a plain
/// [`DualSampler`], which reads back as `Dual`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BatchSampler {
    /// Balanced batches.
    Dual(DualSampler),
    /// Uniform batches.
    Shuffle(ShuffleSampler),
}

impl BatchSampler {
    /// The ids of the next batch.
    pub fn next_batch(&mut self) -> Vec<usize> {
        match self {
            BatchSampler::Dual(s) => s.next_batch(),
            BatchSampler::Shuffle(s) => s.next_batch(),
        }
    }
}

/// The I-positive / J-negative block sampler of SBCD: step `t` draws `i` distinct positives
/// and `j` distinct negatives uniformly (seeded by `t`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockSampler {
    positives: Vec<usize>,
    negatives: Vec<usize>,
    i: usize,
    j: usize,
    seed: u64,
    /// Blocks drawn so far (the resumable position).
    pub step: u64,
}

impl BlockSampler {
    /// A sampler drawing `i` positives and `j` negatives per step.
    ///
    /// # Errors
    /// [`SamplerError::Sizes`] when a class is empty or smaller than its block.
    pub fn new(positive: &[bool], i: usize, j: usize, seed: u64) -> Result<Self, SamplerError> {
        let (positives, negatives) = split_ids(positive);
        if i == 0 || j == 0 || positives.len() < i || negatives.len() < j {
            return Err(SamplerError::Sizes(format!(
                "blocks of {i} positives and {j} negatives from {} positives and {} negatives",
                positives.len(),
                negatives.len()
            )));
        }
        Ok(BlockSampler {
            positives,
            negatives,
            i,
            j,
            seed,
            step: 0,
        })
    }

    /// The next block: (positive ids, negative ids).
    pub fn next_block(&mut self) -> (Vec<usize>, Vec<usize>) {
        let mut rng =
            StdRng::seed_from_u64(self.seed ^ self.step.wrapping_mul(0xD1B5_4A32_D192_ED03));
        self.step += 1;
        (
            self.positives
                .choose_multiple(&mut rng, self.i)
                .copied()
                .collect(),
            self.negatives
                .choose_multiple(&mut rng, self.j)
                .copied()
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<bool> {
        (0..100).map(|i| i % 10 == 0).collect()
    }

    #[test]
    fn dual_sampler_keeps_the_share_and_covers_each_negative_once_per_epoch() {
        let y = labels();
        let mut s = DualSampler::new(&y, 10, 0.5, 3).unwrap();
        assert_eq!(s.batches_per_epoch(), 18);
        let mut seen = vec![0; 100];
        for _ in 0..18 {
            let b = s.next_batch();
            assert_eq!(b.iter().filter(|&&i| y[i]).count(), 5);
            b.iter().filter(|&&i| !y[i]).for_each(|&i| seen[i] += 1);
        }
        assert!((0..100).filter(|&i| !y[i]).all(|i| seen[i] == 1));
        // Resuming at a stored step gives the same batches.
        let mut a = DualSampler::new(&y, 10, 0.5, 3).unwrap();
        for _ in 0..7 {
            a.next_batch();
        }
        let mut b = DualSampler::new(&y, 10, 0.5, 3).unwrap();
        b.step = 7;
        assert_eq!(a.next_batch(), b.next_batch());
        assert!(DualSampler::new(&[true, true], 4, 0.5, 0).is_err());
        assert!(DualSampler::new(&y, 10, 1.0, 0).is_err());
    }

    #[test]
    fn block_sampler_draws_distinct_ids_of_each_class() {
        let y = labels();
        let mut s = BlockSampler::new(&y, 4, 16, 1).unwrap();
        let (p, n) = s.next_block();
        assert_eq!((p.len(), n.len()), (4, 16));
        assert!(p.iter().all(|&i| y[i]) && n.iter().all(|&i| !y[i]));
        let mut q = p.clone();
        q.sort_unstable();
        q.dedup();
        assert_eq!(q.len(), 4);
        assert!(BlockSampler::new(&y, 11, 4, 0).is_err());
    }

    #[test]
    fn shuffle_batches_cover_every_sample_once_per_epoch_and_resume() {
        let mut s = ShuffleSampler::new(10, 4, 3).unwrap();
        let epoch: Vec<usize> = (0..3).flat_map(|_| s.next_batch()).collect();
        let mut sorted = epoch.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        let next = s.next_batch();
        let mut resumed = ShuffleSampler::new(10, 4, 3).unwrap();
        resumed.step = 3;
        assert_eq!(resumed.next_batch(), next);
        assert_ne!(next, epoch[..4].to_vec(), "each epoch has its own order");
        assert!(ShuffleSampler::new(0, 4, 0).is_err());
        // An old checkpoint's plain DualSampler reads back as a BatchSampler.
        let dual = DualSampler::new(&[true, false, false], 2, 0.5, 1).unwrap();
        let text = serde_json::to_string(&dual).unwrap();
        let back: BatchSampler = serde_json::from_str(&text).unwrap();
        assert_eq!(back, BatchSampler::Dual(dual));
        let shuffle: BatchSampler = serde_json::from_str(
            &serde_json::to_string(&BatchSampler::Shuffle(s.clone())).unwrap(),
        )
        .unwrap();
        assert_eq!(shuffle, BatchSampler::Shuffle(s));
    }
}
