//! [`DualLoader`]: a Burn `DataLoader` whose every batch holds both classes, so that a pairwise
//! objective under burn-train's `Learner` never meets a one-class batch.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn::data::dataset::DatasetError;
use burn::tensor::Device;

use crate::sampler::DualSampler;

/// A Burn `DataLoader` over the batches of a [`DualSampler`] (LibAUC's `DualSampler`: a fixed
/// share of positives in every batch, the negatives in one seeded pass per epoch), each turned
/// into the model's input by any Burn `Batcher<usize, O>` (`ImageBatcher`, `TabularBatcher`,
/// a user's own): give it to `SupervisedTraining::new` as the training loader.
///
/// Each `iter()` is one epoch, the next epoch's order at the next call, so a run's batches are
/// a function of the sampler's seed alone; a Learner run resumed from the checkpoint of epoch
/// `E` gets the batches an uninterrupted one would with [`DualLoader::starting_epoch`]`(E)`.
/// Under burn-train's multi-device strategies each device's slice takes its share of every
/// epoch's batches.
pub struct DualLoader<O> {
    sampler: DualSampler,
    batcher: Arc<dyn Batcher<usize, O>>,
    device: Device,
    /// The epoch the next `iter()` runs (each slice and device copy counts its own from the
    /// value at the copy, as burn-train iterates each device's loader once an epoch).
    epoch: Arc<AtomicU64>,
    /// The batches of each epoch this loader gives (all of them, or a slice's).
    batches: Range<usize>,
}

impl<O> DualLoader<O> {
    /// The loader of `sampler`'s batches (from its first), batched by `batcher` on `device`.
    pub fn new(
        sampler: DualSampler,
        batcher: impl Batcher<usize, O> + 'static,
        device: &Device,
    ) -> Self {
        let batches = 0..sampler.batches_per_epoch();
        let mut sampler = sampler;
        sampler.step = 0;
        DualLoader {
            sampler,
            batcher: Arc::new(batcher),
            device: device.clone(),
            epoch: Arc::new(AtomicU64::new(0)),
            batches,
        }
    }

    /// The same loader, its next `iter()` being epoch `epoch` (counted from 0): a Learner run
    /// resumed with `.checkpoint(E)` continues with the batches of epoch `E`.
    pub fn starting_epoch(self, epoch: u64) -> Self {
        self.epoch.store(epoch, Ordering::Relaxed);
        self
    }

    /// The ids of batch `k` of `epoch`.
    fn ids(&self, epoch: u64, k: usize) -> Vec<usize> {
        let mut s = self.sampler.clone();
        s.step = epoch * self.sampler.batches_per_epoch() as u64 + k as u64;
        s.next_batch()
    }

    fn with(&self, device: Device, batches: Range<usize>) -> Self {
        DualLoader {
            sampler: self.sampler.clone(),
            batcher: self.batcher.clone(),
            device,
            epoch: Arc::new(AtomicU64::new(self.epoch.load(Ordering::Relaxed))),
            batches,
        }
    }
}

/// One epoch of a [`DualLoader`].
struct Epoch<'a, O> {
    loader: &'a DualLoader<O>,
    epoch: u64,
    next: usize,
}

impl<O> Iterator for Epoch<'_, O> {
    type Item = Result<O, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.loader.batches.end {
            return None;
        }
        let ids = self.loader.ids(self.epoch, self.next);
        self.next += 1;
        Some(Ok(self.loader.batcher.batch(ids, &self.loader.device)))
    }
}

impl<O> DataLoaderIterator<O> for Epoch<'_, O> {
    fn progress(&self) -> Progress {
        let per = self.loader.sampler.batch_size();
        let done = self.next - self.loader.batches.start;
        Progress::new(
            done * per,
            self.loader.batches.len() * per,
            Some("items".into()),
        )
    }
}

impl<O: 'static> DataLoader<O> for DualLoader<O> {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<O> + 'a> {
        let epoch = self.epoch.fetch_add(1, Ordering::Relaxed);
        Box::new(Epoch {
            loader: self,
            epoch,
            next: self.batches.start,
        })
    }

    /// Items per epoch, counted as full batches (the last batch of an epoch may be short).
    fn num_items(&self) -> usize {
        self.batches.len() * self.sampler.batch_size()
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<O>> {
        Arc::new(self.with(device.clone(), self.batches.clone()))
    }

    /// The batches whose first item falls in `start..end` (items counted as in
    /// [`DataLoader::num_items`]).
    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<O>> {
        let per = self.sampler.batch_size();
        let first = self.batches.start + start.div_ceil(per);
        let last = (self.batches.start + end.div_ceil(per)).min(self.batches.end);
        Arc::new(self.with(self.device.clone(), first..last.max(first)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids themselves as the batch.
    struct Ids;
    impl Batcher<usize, Vec<usize>> for Ids {
        fn batch(&self, items: Vec<usize>, _device: &Device) -> Vec<usize> {
            items
        }
    }

    #[test]
    fn every_batch_holds_both_classes_and_epochs_differ() {
        // 6 positives in 60 (10%): at batch 4, two uniform batches in three are one-class.
        let positive: Vec<bool> = (0..60).map(|i| i % 10 == 0).collect();
        let sampler = DualSampler::new(&positive, 4, 0.25, 3).unwrap();
        let loader = DualLoader::new(sampler.clone(), Ids, &Device::default());
        let epoch = |l: &DualLoader<Vec<usize>>| -> Vec<Vec<usize>> {
            l.iter().map(|b| b.unwrap()).collect()
        };
        let first = epoch(&loader);
        assert_eq!(first.len(), sampler.batches_per_epoch());
        for b in &first {
            assert!(b.iter().any(|&i| positive[i]) && b.iter().any(|&i| !positive[i]));
        }
        // Every negative once an epoch.
        let mut negatives: Vec<usize> = first
            .iter()
            .flatten()
            .copied()
            .filter(|&i| !positive[i])
            .collect();
        negatives.sort_unstable();
        assert_eq!(
            negatives,
            (0..60).filter(|&i| !positive[i]).collect::<Vec<_>>()
        );
        let second = epoch(&loader);
        assert_ne!(first, second, "the next epoch's order");
        // The sampler's own batches, in order: a resumed loader gives epoch 1 again.
        let mut s = sampler.clone();
        let drawn: Vec<Vec<usize>> = (0..2 * first.len()).map(|_| s.next_batch()).collect();
        assert_eq!([first.clone(), second.clone()].concat(), drawn);
        let resumed = DualLoader::new(sampler, Ids, &Device::default()).starting_epoch(1);
        assert_eq!(epoch(&resumed), second);
        // Two slices (two devices) share the epoch's batches between them.
        let halves = [loader.slice(0, 28), loader.slice(28, loader.num_items())];
        let third: Vec<Vec<usize>> = halves
            .iter()
            .flat_map(|h| h.iter().map(|b| b.unwrap()).collect::<Vec<_>>())
            .collect();
        let want: Vec<Vec<usize>> = (0..first.len()).map(|k| loader.ids(2, k)).collect();
        assert_eq!(third, want, "the halves cover epoch 2's batches once");
    }
}
