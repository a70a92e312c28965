//! Small images held in memory as bytes (CIFAR, MNIST-style sets), the long-tailed builders of
//! the partial-AUC experiments, and the binary (one-vs-rest) view the objectives train on.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::error::{DataError, list};

/// `n` images of `channels x height x width` bytes (channel-major, as CIFAR stores them) with a
/// class label each. The sample id the solvers index their per-sample state by is the
/// position `i` in the set, fixed once the set is built; `source[i]` records the image's
/// index in the file it was read from, through the long-tailed and binary builders.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageSet {
    /// Name used in messages.
    pub name: String,
    /// Channels (3 for CIFAR, 1 for MNIST-style sets).
    pub channels: usize,
    /// Height in pixels.
    pub height: usize,
    /// Width in pixels.
    pub width: usize,
    /// Pixel bytes, `n * channels * height * width`, image after image.
    pub pixels: Vec<u8>,
    /// Class of each image.
    pub labels: Vec<u16>,
    /// Index of each image in the file(s) it was read from.
    pub source: Vec<usize>,
    /// Number of classes of the original data set.
    pub num_classes: usize,
}

impl ImageSet {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Bytes per image.
    pub fn image_len(&self) -> usize {
        self.channels * self.height * self.width
    }

    /// The bytes of image `i`.
    pub fn image(&self, i: usize) -> &[u8] {
        let l = self.image_len();
        &self.pixels[i * l..(i + 1) * l]
    }

    /// Images per class.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.num_classes];
        for &l in &self.labels {
            c[l as usize] += 1;
        }
        c
    }

    /// The images at `idx`, in that order (source indices kept).
    pub fn subset(&self, idx: &[usize]) -> ImageSet {
        let mut pixels = Vec::with_capacity(idx.len() * self.image_len());
        for &i in idx {
            pixels.extend_from_slice(self.image(i));
        }
        ImageSet {
            name: self.name.clone(),
            channels: self.channels,
            height: self.height,
            width: self.width,
            pixels,
            labels: idx.iter().map(|&i| self.labels[i]).collect(),
            source: idx.iter().map(|&i| self.source[i]).collect(),
            num_classes: self.num_classes,
        }
    }

    /// Concatenate two sets of the same geometry (e.g. CIFAR's five training batches).
    ///
    /// # Errors
    /// [`DataError::Invalid`] when the image sizes or class counts differ.
    pub fn append(&mut self, other: ImageSet) -> Result<(), DataError> {
        if (self.channels, self.height, self.width, self.num_classes)
            != (other.channels, other.height, other.width, other.num_classes)
        {
            return Err(DataError::invalid(
                &other.name,
                format!("its images do not match those of {}", self.name),
            ));
        }
        self.pixels.extend(other.pixels);
        self.labels.extend(other.labels);
        self.source.extend(other.source);
        Ok(())
    }

    /// Long-tailed subset with an exponential profile (Cui et al. 2019, as in the LT CIFAR
    /// benchmarks): class `c` keeps `floor(n_max * factor^(c / (C - 1)))` images, the first
    /// ones of that class in file order, so the result is deterministic. `n_max` is the
    /// smallest class's count, so every class has its quota when the classes differ in size
    /// (MNIST: 5,421 to 6,742 per class, `n_max` = 5,421); on a balanced set it is the class
    /// size. With CIFAR-10's 5000 training images per class and `factor = 0.01` the counts are
    /// 5000, 2997, 1796, 1077, 645, 387, 232, 139, 83, 50.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when `factor` is not in (0, 1] or a class has no image.
    pub fn long_tailed(&self, factor: f64) -> Result<ImageSet, DataError> {
        if !(factor > 0.0 && factor <= 1.0) {
            return Err(DataError::invalid(
                &self.name,
                format!("imbalance factor {factor} must be in (0, 1]"),
            ));
        }
        let counts = self.class_counts();
        if let Some(c) = counts.iter().position(|&n| n == 0) {
            return Err(DataError::invalid(
                &self.name,
                format!("class {c} has no image: no long-tailed profile over all classes"),
            ));
        }
        let n_max = counts.iter().copied().min().unwrap_or(0);
        let c_last = (self.num_classes.max(2) - 1) as f64;
        let quota: Vec<usize> = (0..self.num_classes)
            .map(|c| (n_max as f64 * factor.powf(c as f64 / c_last)) as usize)
            .collect();
        for (c, (&q, &have)) in quota.iter().zip(&counts).enumerate() {
            if have < q {
                return Err(DataError::invalid(
                    &self.name,
                    format!("class {c} has {have} images, fewer than its long-tailed quota {q}"),
                ));
            }
        }
        let mut taken = vec![0usize; self.num_classes];
        let idx: Vec<usize> = (0..self.len())
            .filter(|&i| {
                let c = self.labels[i] as usize;
                taken[c] += 1;
                taken[c] <= quota[c]
            })
            .collect();
        let mut out = self.subset(&idx);
        out.name = format!("{}-LT({factor})", self.name);
        Ok(out)
    }

    /// LibAUC's `ImbalancedDataGenerator` for a binary task: classes `>= num_classes / 2` are
    /// positive, all negatives are kept, and positives are subsampled (seeded) to
    /// `floor(imratio / (1 - imratio) * negatives)`, so that they make up `imratio` of the set.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when `imratio` is not in (0, 0.5] or there are too few positives.
    pub fn imbalanced_binary(&self, imratio: f64, seed: u64) -> Result<BinaryImageSet, DataError> {
        if !(imratio > 0.0 && imratio <= 0.5) {
            return Err(DataError::invalid(
                &self.name,
                format!("imratio {imratio} must be in (0, 0.5]"),
            ));
        }
        let half = (self.num_classes / 2) as u16;
        let (pos, neg): (Vec<usize>, Vec<usize>) =
            (0..self.len()).partition(|&i| self.labels[i] >= half);
        let want = (imratio / (1.0 - imratio) * neg.len() as f64) as usize;
        if want > pos.len() || want == 0 {
            return Err(DataError::invalid(
                &self.name,
                format!(
                    "imratio {imratio} needs {want} positives, {} available",
                    pos.len()
                ),
            ));
        }
        let mut pos = pos;
        pos.shuffle(&mut StdRng::seed_from_u64(seed));
        pos.truncate(want);
        let mut idx: Vec<usize> = neg.into_iter().chain(pos).collect();
        idx.sort_unstable();
        let positives: Vec<u16> = (half..self.num_classes as u16).collect();
        let mut b = self.subset(&idx).binary(&positives)?;
        b.images.name = format!("{}-imratio({imratio})", self.name);
        Ok(b)
    }

    /// One-vs-rest view: images of `positive_classes` are positive (+1), the rest negative.
    ///
    /// # Errors
    /// [`DataError::Invalid`] for a class out of range or when either side is empty.
    pub fn binary(self, positive_classes: &[u16]) -> Result<BinaryImageSet, DataError> {
        if let Some(c) = positive_classes
            .iter()
            .find(|&&c| c as usize >= self.num_classes)
        {
            return Err(DataError::invalid(
                &self.name,
                format!("positive class {c} out of range (0..{})", self.num_classes),
            ));
        }
        let positive: Vec<bool> = self
            .labels
            .iter()
            .map(|l| positive_classes.contains(l))
            .collect();
        let p = positive.iter().filter(|&&b| b).count();
        if p == 0 || p == positive.len() {
            return Err(DataError::invalid(
                &self.name,
                format!(
                    "the binary task with positive classes ({}) has {p} positives out of {}",
                    list(positive_classes),
                    positive.len()
                ),
            ));
        }
        Ok(BinaryImageSet {
            images: self,
            positive,
        })
    }
}

/// An [`ImageSet`] with a binary label per image (the task the objectives train on).
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryImageSet {
    /// The images, their original classes and source indices.
    pub images: ImageSet,
    /// Whether each image is positive.
    pub positive: Vec<bool>,
}

impl BinaryImageSet {
    /// Number of positives.
    pub fn positives(&self) -> usize {
        self.positive.iter().filter(|&&b| b).count()
    }

    /// Number of negatives.
    pub fn negatives(&self) -> usize {
        self.positive.len() - self.positives()
    }

    /// Labels as -1/+1.
    pub fn signed_labels(&self) -> Vec<f64> {
        self.positive
            .iter()
            .map(|&p| if p { 1.0 } else { -1.0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy(per_class: usize, classes: usize) -> ImageSet {
        let n = per_class * classes;
        ImageSet {
            name: "toy".into(),
            channels: 1,
            height: 1,
            width: 2,
            pixels: (0..2 * n).map(|i| i as u8).collect(),
            labels: (0..n).map(|i| (i % classes) as u16).collect(),
            source: (0..n).collect(),
            num_classes: classes,
        }
    }

    #[test]
    fn cifar10_lt_profile_and_the_cat_task() {
        let lt = toy(5000, 10).long_tailed(0.01).unwrap();
        assert_eq!(
            lt.class_counts(),
            vec![5000, 2997, 1796, 1077, 645, 387, 232, 139, 83, 50]
        );
        let cats = lt.binary(&[3]).unwrap();
        assert_eq!((cats.positives(), cats.negatives()), (1077, 11329));
        // Source indices are the original ones and pixels travel with them.
        let b = &cats.images;
        for i in [0, 17, b.len() - 1] {
            let id = b.source[i];
            assert_eq!(b.image(i), &[(2 * id) as u8, (2 * id + 1) as u8]);
        }
        assert!(toy(10, 10).long_tailed(0.0).is_err());
        assert!(toy(10, 10).long_tailed(1.5).is_err());
    }

    #[test]
    fn classes_of_unequal_size_take_the_profile_of_the_smallest() {
        // Class 0 is the largest with 300 images, class 2 the smallest with 100 (as MNIST's
        // class 1 and class 5): the profile starts at 100 and every class has its quota.
        let mut set = toy(300, 3);
        let keep: Vec<usize> = (0..set.len())
            .filter(|&i| match set.labels[i] {
                1 => i < 600,
                2 => i < 300,
                _ => true,
            })
            .collect();
        set = set.subset(&keep);
        assert_eq!(set.class_counts(), vec![300, 200, 100]);
        assert_eq!(
            set.long_tailed(0.25).unwrap().class_counts(),
            vec![100, 50, 25]
        );
        // A class without images has no place in the profile.
        let no_two: Vec<usize> = (0..set.len()).filter(|&i| set.labels[i] != 2).collect();
        assert!(set.subset(&no_two).long_tailed(0.5).is_err());
    }

    #[test]
    fn libauc_imratio_builder() {
        let b = toy(1000, 10).imbalanced_binary(0.1, 7).unwrap();
        assert_eq!(b.negatives(), 5000);
        assert_eq!(b.positives(), 555);
        assert!(
            b.images
                .labels
                .iter()
                .zip(&b.positive)
                .all(|(&l, &p)| p == (l >= 5))
        );
        let again = toy(1000, 10).imbalanced_binary(0.1, 7).unwrap();
        assert_eq!(b, again);
        assert!(toy(1000, 10).imbalanced_binary(0.7, 7).is_err());
        assert!(toy(10, 10).binary(&[12]).is_err());
        assert!(toy(10, 1).binary(&[0]).is_err());
    }
}
