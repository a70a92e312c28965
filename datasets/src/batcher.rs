//! Burn batchers: sample ids in, `(inputs, labels, ids)` out on the requested device. The ids
//! stay on the CPU, where the objectives keep their per-sample state.

use std::sync::Arc;

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::{Dataset, DatasetError};
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::chexpert::Chexpert;
use crate::error::DataError;
use crate::imageset::BinaryImageSet;
use crate::tabular::Tabular;
use crate::transform::XrayTransform;

/// The ids `0..n` of a data set as a Burn [`Dataset`], so that Burn's `DataLoaderBuilder`
/// (shuffling, worker threads) drives the batchers below, which turn ids into tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleIds {
    n: usize,
}

impl SampleIds {
    /// The ids of a data set of `n` samples.
    pub fn new(n: usize) -> Self {
        SampleIds { n }
    }
}

impl Dataset<usize> for SampleIds {
    fn get(&self, index: usize) -> Result<usize, DatasetError> {
        if index < self.n {
            Ok(index)
        } else {
            Err(DatasetError::new(std::io::Error::other(format!(
                "sample id {index} out of range (the set has {})",
                self.n
            ))))
        }
    }

    fn len(&self) -> usize {
        self.n
    }
}

/// A batch of tabular rows.
#[derive(Debug, Clone)]
pub struct TabularBatch {
    /// `[batch, d]`.
    pub inputs: Tensor<2>,
    /// Labels in {-1, +1}: `[batch]`.
    pub labels: Tensor<1>,
    /// The same labels on the CPU, for the objectives (no read-back needed).
    pub targets: Vec<f64>,
    /// Sample ids, in batch order.
    pub ids: Vec<usize>,
    /// The labels as Burn's classification losses take them, 1 positive and 0 negative:
    /// `[batch]` (the `targets` of rankrisk's `Objective::forward`).
    pub classes: Tensor<1, Int>,
    /// The sample ids as a tensor, `[batch]` (the `ids` of `Objective::forward`).
    pub sample_ids: Tensor<1, Int>,
}

/// Batches rows of a [`Tabular`] set.
#[derive(Debug, Clone)]
pub struct TabularBatcher {
    set: Arc<Tabular>,
}

impl TabularBatcher {
    /// A batcher over `set`.
    pub fn new(set: Arc<Tabular>) -> Self {
        TabularBatcher { set }
    }

    /// The rows `ids` as one batch.
    ///
    /// # Errors
    /// [`DataError::Invalid`] for an id out of range or an empty batch.
    pub fn try_batch(&self, ids: &[usize], device: &Device) -> Result<TabularBatch, DataError> {
        let t = &self.set;
        if ids.is_empty() {
            return Err(DataError::invalid(&t.name, "empty batch"));
        }
        if let Some(&bad) = ids.iter().find(|&&i| i >= t.n()) {
            return Err(DataError::invalid(
                &t.name,
                format!("sample id {bad} out of range (the set has {})", t.n()),
            ));
        }
        let x: Vec<f32> = ids
            .iter()
            .flat_map(|&i| t.row(i).iter().map(|&v| v as f32))
            .collect();
        let y: Vec<f32> = ids.iter().map(|&i| t.y[i] as f32).collect();
        let signs: Vec<f64> = ids.iter().map(|&i| t.y[i]).collect();
        Ok(TabularBatch {
            inputs: Tensor::from_data(TensorData::new(x, [ids.len(), t.d]), device),
            labels: Tensor::from_data(TensorData::new(y, [ids.len()]), device),
            classes: classes(&signs, device),
            sample_ids: id_tensor(ids, device),
            targets: signs,
            ids: ids.to_vec(),
        })
    }
}

impl Batcher<usize, TabularBatch> for TabularBatcher {
    /// Panics on an id out of range; use [`TabularBatcher::try_batch`] to get an error.
    fn batch(&self, items: Vec<usize>, device: &Device) -> TabularBatch {
        self.try_batch(&items, device)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// A batch for a binary task (or several binary tasks of the same images).
#[derive(Debug, Clone)]
pub struct ImageBatch {
    /// `[batch, channels, height, width]`.
    pub inputs: Tensor<4>,
    /// Labels, +1 for positive and -1 for negative: `[batch * tasks]`, row-major.
    pub labels: Tensor<1>,
    /// The same labels on the CPU, for the objectives (no read-back needed).
    pub targets: Vec<f64>,
    /// Labels per sample (1 for a binary task).
    pub tasks: usize,
    /// Sample ids (positions in the data set), in batch order.
    pub ids: Vec<usize>,
    /// The labels as Burn's classification losses take them, 1 positive and 0 negative:
    /// `[batch * tasks]` (the `targets` of rankrisk's `Objective::forward`).
    pub classes: Tensor<1, Int>,
    /// The sample ids as a tensor, `[batch]` (the `ids` of `Objective::forward`).
    pub sample_ids: Tensor<1, Int>,
}

/// Labels in {-1, +1} as 0/1 classes on `device`.
fn classes(signs: &[f64], device: &Device) -> Tensor<1, Int> {
    let c: Vec<i64> = signs.iter().map(|&y| i64::from(y > 0.0)).collect();
    Tensor::from_data(TensorData::new(c, [signs.len()]), device)
}

/// Sample ids as an integer tensor on `device`.
fn id_tensor(ids: &[usize], device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = ids.iter().map(|&i| i as i64).collect();
    Tensor::from_data(TensorData::new(v, [ids.len()]), device)
}

/// A batch assembled in host memory, not yet on a device: what a loader thread prepares while
/// the device runs the previous step.
#[derive(Debug, Clone, PartialEq)]
pub struct HostBatch {
    /// Normalized pixels, `shape` in row-major order.
    pub pixels: Vec<f32>,
    /// `[batch, channels, height, width]`.
    pub shape: [usize; 4],
    /// Labels, +1 for positive and -1 for negative: `tasks` per sample, row-major
    /// (`targets[k * tasks + t]` is sample `k`'s label of task `t`).
    pub targets: Vec<f64>,
    /// Labels per sample (1 for a binary task).
    pub tasks: usize,
    /// Sample ids, in batch order.
    pub ids: Vec<usize>,
}

impl HostBatch {
    /// The samples at positions `rows` of the batch, in that order (a shard for data-parallel
    /// training).
    ///
    /// # Panics
    /// If a position is past the batch.
    pub fn select(&self, rows: &[usize]) -> HostBatch {
        let [_, c, h, w] = self.shape;
        let per = c * h * w;
        let t = self.tasks;
        HostBatch {
            pixels: rows
                .iter()
                .flat_map(|&r| self.pixels[r * per..(r + 1) * per].iter().copied())
                .collect(),
            shape: [rows.len(), c, h, w],
            targets: rows
                .iter()
                .flat_map(|&r| self.targets[r * t..(r + 1) * t].iter().copied())
                .collect(),
            tasks: t,
            ids: rows.iter().map(|&r| self.ids[r]).collect(),
        }
    }

    /// The batch on `device` (one upload of the pixels, and the labels and ids).
    pub fn to_device(self, device: &Device) -> ImageBatch {
        let y: Vec<f32> = self.targets.iter().map(|&v| v as f32).collect();
        let n = y.len();
        ImageBatch {
            inputs: Tensor::from_data(TensorData::new(self.pixels, self.shape), device),
            labels: Tensor::from_data(TensorData::new(y, [n]), device),
            classes: classes(&self.targets, device),
            sample_ids: id_tensor(&self.ids, device),
            targets: self.targets,
            tasks: self.tasks,
            ids: self.ids,
        }
    }
}

/// A binary image data set batched by sample id: the source every training and evaluation
/// loop reads (the long-tailed sets through [`ImageBatcher`], CheXpert through
/// [`ChexpertBatcher`]).
pub trait ImageSource: Send + Sync {
    /// Number of samples.
    fn len(&self) -> usize;
    /// Whether there are no samples.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Labels in {-1, +1}, id order (of the first task when there are several).
    fn labels(&self) -> Vec<f64>;
    /// Labels per sample (1 for a binary task).
    fn tasks(&self) -> usize {
        1
    }
    /// The labels of task `t` in {-1, +1}, id order.
    fn task_labels(&self, t: usize) -> Vec<f64> {
        debug_assert_eq!(t, 0, "a binary set has one task");
        self.labels()
    }
    /// The name of task `t` (for tables).
    fn task_name(&self, t: usize) -> String {
        format!("task {t}")
    }
    /// The samples `ids` as a batch in host memory.
    ///
    /// # Errors
    /// A [`DataError`] naming an unreadable image or a bad id.
    fn host_batch(&self, ids: &[usize]) -> Result<HostBatch, DataError>;
    /// The samples `ids` as a batch on `device`.
    ///
    /// # Errors
    /// As [`ImageSource::host_batch`].
    fn batch(&self, ids: &[usize], device: &Device) -> Result<ImageBatch, DataError> {
        Ok(self.host_batch(ids)?.to_device(device))
    }
}

impl ImageSource for ImageBatcher {
    fn len(&self) -> usize {
        self.set.positive.len()
    }
    fn labels(&self) -> Vec<f64> {
        self.set.signed_labels()
    }
    fn host_batch(&self, ids: &[usize]) -> Result<HostBatch, DataError> {
        ImageBatcher::host_batch(self, ids)
    }
}

impl ImageSource for ChexpertBatcher {
    fn len(&self) -> usize {
        self.set.len()
    }
    fn labels(&self) -> Vec<f64> {
        self.task_labels(0)
    }
    fn tasks(&self) -> usize {
        self.set.tasks.len()
    }
    fn task_labels(&self, t: usize) -> Vec<f64> {
        (0..self.set.len())
            .map(|i| signed(self.set.label(i)[t]))
            .collect()
    }
    fn task_name(&self, t: usize) -> String {
        self.set.tasks[t].column().to_string()
    }
    fn host_batch(&self, ids: &[usize]) -> Result<HostBatch, DataError> {
        ChexpertBatcher::host_batch(self, ids)
    }
}

/// Batches a [`BinaryImageSet`]: bytes scaled to [0, 1], then `(x - mean[c]) / std[c]`.
#[derive(Debug, Clone)]
pub struct ImageBatcher {
    set: Arc<BinaryImageSet>,
    mean: Vec<f32>,
    std: Vec<f32>,
}

impl ImageBatcher {
    /// A batcher with per-channel `mean` and `std` (one value each, or one per channel).
    ///
    /// # Errors
    /// [`DataError::Invalid`] for a length that fits neither or a non-positive std.
    pub fn new(set: Arc<BinaryImageSet>, mean: &[f32], std: &[f32]) -> Result<Self, DataError> {
        let c = set.images.channels;
        let expand = |v: &[f32], what: &str| match v.len() {
            1 => Ok(vec![v[0]; c]),
            n if n == c => Ok(v.to_vec()),
            n => Err(DataError::invalid(
                &set.images.name,
                format!("{n} {what} values for {c} channels"),
            )),
        };
        let (mean, std) = (expand(mean, "mean")?, expand(std, "std")?);
        if std
            .iter()
            .any(|&s| s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater))
        {
            return Err(DataError::invalid(&set.images.name, "std must be positive"));
        }
        Ok(ImageBatcher { set, mean, std })
    }

    /// The data set.
    pub fn set(&self) -> &BinaryImageSet {
        &self.set
    }

    /// The inputs of `ids` as one batch in host memory, checking that every id exists.
    ///
    /// # Errors
    /// [`DataError::Invalid`] for an id out of range or an empty batch.
    pub fn host_batch(&self, ids: &[usize]) -> Result<HostBatch, DataError> {
        let s = &self.set.images;
        if ids.is_empty() {
            return Err(DataError::invalid(&s.name, "empty batch"));
        }
        if let Some(&bad) = ids.iter().find(|&&i| i >= s.len()) {
            return Err(DataError::invalid(
                &s.name,
                format!("sample id {bad} out of range (the set has {})", s.len()),
            ));
        }
        let plane = s.height * s.width;
        let mut x = Vec::with_capacity(ids.len() * s.image_len());
        for &i in ids {
            for (k, &v) in s.image(i).iter().enumerate() {
                let c = k / plane;
                x.push((v as f32 / 255.0 - self.mean[c]) / self.std[c]);
            }
        }
        let targets: Vec<f64> = ids
            .iter()
            .map(|&i| if self.set.positive[i] { 1.0 } else { -1.0 })
            .collect();
        Ok(HostBatch {
            pixels: x,
            shape: [ids.len(), s.channels, s.height, s.width],
            targets,
            tasks: 1,
            ids: ids.to_vec(),
        })
    }

    /// The inputs of `ids` as one batch on `device`, checking that every id exists.
    ///
    /// # Errors
    /// [`DataError::Invalid`] for an id out of range or an empty batch.
    pub fn try_batch(&self, ids: &[usize], device: &Device) -> Result<ImageBatch, DataError> {
        Ok(self.host_batch(ids)?.to_device(device))
    }
}

impl Batcher<usize, ImageBatch> for ImageBatcher {
    /// Panics on an id out of range (Burn's trait has no error path); use
    /// [`ImageBatcher::try_batch`] to get an error instead.
    fn batch(&self, items: Vec<usize>, device: &Device) -> ImageBatch {
        self.try_batch(&items, device)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// A 0/1 label as -1/+1.
fn signed(v: u8) -> f64 {
    if v == 1 { 1.0 } else { -1.0 }
}

/// Batches a [`Chexpert`] set (one task, or several as a multi-label batch): decodes,
/// transforms (augmentation seeded by the sample id and `epoch`, so a resumed run sees the same
/// images) and stacks.
#[derive(Debug, Clone)]
pub struct ChexpertBatcher {
    set: Arc<Chexpert>,
    transform: XrayTransform,
    seed: u64,
    /// Epoch mixed into the augmentation seed.
    pub epoch: u64,
}

impl ChexpertBatcher {
    /// A batcher over `set` (all of its tasks).
    pub fn new(set: Arc<Chexpert>, transform: XrayTransform, seed: u64) -> Self {
        ChexpertBatcher {
            set,
            transform,
            seed,
            epoch: 0,
        }
    }

    /// The data set.
    pub fn set(&self) -> &Chexpert {
        &self.set
    }

    /// Decode, transform and stack `ids` in host memory.
    ///
    /// # Errors
    /// [`DataError::Image`] naming an unreadable image; [`DataError::Invalid`] for an id out of
    /// range or an empty batch; [`DataError::TooLarge`] for a batch that does not fit in memory.
    pub fn host_batch(&self, ids: &[usize]) -> Result<HostBatch, DataError> {
        use rand::SeedableRng;
        if ids.is_empty() {
            return Err(DataError::invalid("CheXpert", "empty batch"));
        }
        let size = self.transform.size;
        let values = crate::memory::check_dense(
            ids.len(),
            size.saturating_mul(size).saturating_mul(3),
            std::mem::size_of::<f32>(),
            &format!(
                "a CheXpert batch of {} images at {size} x {size}",
                ids.len()
            ),
        )?;
        let mut x = Vec::with_capacity(values);
        let mut targets = Vec::with_capacity(ids.len() * self.set.tasks.len());
        for &i in ids {
            if i >= self.set.len() {
                return Err(DataError::invalid(
                    "CheXpert",
                    format!(
                        "sample id {i} out of range (the set has {})",
                        self.set.len()
                    ),
                ));
            }
            let mut rng = rand::rngs::StdRng::seed_from_u64(
                self.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.epoch,
            );
            x.extend(self.set.image(i, &self.transform, &mut rng)?);
            targets.extend(self.set.label(i).iter().map(|&v| signed(v)));
        }
        Ok(HostBatch {
            pixels: x,
            shape: [ids.len(), 3, size, size],
            targets,
            tasks: self.set.tasks.len(),
            ids: ids.to_vec(),
        })
    }

    /// Decode, transform and stack `ids` on `device`.
    ///
    /// # Errors
    /// As [`ChexpertBatcher::host_batch`].
    pub fn try_batch(&self, ids: &[usize], device: &Device) -> Result<ImageBatch, DataError> {
        Ok(self.host_batch(ids)?.to_device(device))
    }
}

impl Batcher<usize, ImageBatch> for ChexpertBatcher {
    /// Panics on an unreadable image (Burn's trait has no error path); use
    /// [`ChexpertBatcher::try_batch`] to get an error instead.
    fn batch(&self, items: Vec<usize>, device: &Device) -> ImageBatch {
        self.try_batch(&items, device)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabular_batches_and_sample_ids() {
        let set = Arc::new(crate::load_builtin("australian").unwrap());
        let b = TabularBatcher::new(set.clone());
        let device = Device::flex();
        let batch = b.try_batch(&[3, 0, 689], &device).unwrap();
        assert_eq!(batch.inputs.dims(), [3, 14]);
        let x: Vec<f32> = batch.inputs.into_data().try_into_vec().unwrap();
        assert_eq!(
            x[..14],
            set.row(3).iter().map(|&v| v as f32).collect::<Vec<_>>()[..]
        );
        let y: Vec<f32> = batch.labels.into_data().try_into_vec().unwrap();
        assert_eq!(y, vec![set.y[3] as f32, set.y[0] as f32, set.y[689] as f32]);
        assert!(b.try_batch(&[690], &device).is_err());
        assert!(b.try_batch(&[], &device).is_err());
        let ids = SampleIds::new(690);
        assert_eq!((ids.len(), ids.get(5).unwrap()), (690, 5));
        assert!(ids.get(690).is_err());
    }
}
