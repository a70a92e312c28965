//! Image preprocessing for the X-ray models: decode, grayscale, resize, optional random affine
//! augmentation, replicate to 3 channels and normalize with the ImageNet mean and std (the
//! statistics of the pretrained DenseNet121).

use std::path::Path;

use image::imageops::FilterType;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::DataError;

/// ImageNet channel means (RGB).
pub const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
/// ImageNet channel standard deviations (RGB).
pub const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];

/// Random affine augmentation: rotation, translation and scale drawn uniformly per image,
/// bilinear resampling, zero (black) fill outside the source.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RandomAffine {
    /// Largest rotation in degrees (either direction).
    pub degrees: f32,
    /// Largest translation as a fraction of the image size (each axis).
    pub translate: f32,
    /// Scale range.
    pub scale: (f32, f32),
}

impl Default for RandomAffine {
    /// The CheXpert training augmentation: +/-15 degrees, 5% translation, scale 0.95-1.05.
    fn default() -> Self {
        RandomAffine {
            degrees: 15.0,
            translate: 0.05,
            scale: (0.95, 1.05),
        }
    }
}

impl RandomAffine {
    /// Apply a random draw of the transform to a `size x size` plane.
    pub fn apply<R: Rng>(&self, plane: &[f32], size: usize, rng: &mut R) -> Vec<f32> {
        let angle = rng.random_range(-self.degrees..=self.degrees).to_radians();
        let tx = rng.random_range(-self.translate..=self.translate) * size as f32;
        let ty = rng.random_range(-self.translate..=self.translate) * size as f32;
        let s = rng.random_range(self.scale.0..=self.scale.1);
        warp(plane, size, angle, tx, ty, s)
    }
}

/// Output pixel `p` takes the source at `R(-angle) (p - c - t) / s + c` (c the centre),
/// i.e. the source is rotated by `angle`, scaled by `s` and shifted by `t`.
fn warp(plane: &[f32], size: usize, angle: f32, tx: f32, ty: f32, s: f32) -> Vec<f32> {
    let c = (size as f32 - 1.0) / 2.0;
    let (sin, cos) = angle.sin_cos();
    let mut out = vec![0.0; size * size];
    let at = |x: isize, y: isize| -> f32 {
        if x < 0 || y < 0 || x >= size as isize || y >= size as isize {
            0.0
        } else {
            plane[y as usize * size + x as usize]
        }
    };
    for y in 0..size {
        for x in 0..size {
            let dx = x as f32 - c - tx;
            let dy = y as f32 - c - ty;
            let sx = (cos * dx + sin * dy) / s + c;
            let sy = (-sin * dx + cos * dy) / s + c;
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (x0, y0) = (x0 as isize, y0 as isize);
            out[y * size + x] = (1.0 - fy) * ((1.0 - fx) * at(x0, y0) + fx * at(x0 + 1, y0))
                + fy * ((1.0 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1));
        }
    }
    out
}

/// How an X-ray image becomes a network input.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct XrayTransform {
    /// Output side in pixels (224 or 320 for CheXpert).
    pub size: usize,
    /// Training augmentation; `None` for evaluation.
    pub augment: Option<RandomAffine>,
}

impl XrayTransform {
    /// Evaluation transform at `size`.
    pub fn eval(size: usize) -> Self {
        XrayTransform {
            size,
            augment: None,
        }
    }

    /// Training transform at `size` with the default [`RandomAffine`].
    pub fn train(size: usize) -> Self {
        XrayTransform {
            size,
            augment: Some(RandomAffine::default()),
        }
    }

    /// Decode `path` and produce `3 x size x size` values (channel-major), normalized per
    /// channel with the ImageNet statistics.
    ///
    /// # Errors
    /// [`DataError::Image`] naming the file when it is missing, truncated or not an image;
    /// [`DataError::Invalid`] for a size of 0 or above 65,535 pixels, [`DataError::TooLarge`]
    /// when one transformed image does not fit in memory (both before anything is decoded).
    pub fn load<R: Rng>(&self, path: &Path, rng: &mut R) -> Result<Vec<f32>, DataError> {
        let fail = |message: String| DataError::Image {
            path: path.to_path_buf(),
            message,
        };
        if self.size == 0 || self.size > usize::from(u16::MAX) {
            return Err(DataError::invalid(
                path.display().to_string(),
                format!(
                    "image size {} must be between 1 and 65535 pixels",
                    self.size
                ),
            ));
        }
        crate::memory::check_dense(
            3,
            self.size.saturating_mul(self.size),
            std::mem::size_of::<f32>(),
            &format!("{} at {} x {}", path.display(), self.size, self.size),
        )?;
        let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        if bytes.starts_with(&[0xFF, 0xD8]) && !jpeg_is_complete(&bytes) {
            return Err(fail(
                "truncated JPEG (no end-of-image marker after the last scan)".to_string(),
            ));
        }
        let img = image::load_from_memory(&bytes).map_err(|e| fail(e.to_string()))?;
        let gray = img.to_luma8();
        let resized = image::imageops::resize(
            &gray,
            self.size as u32,
            self.size as u32,
            FilterType::Triangle,
        );
        let plane: Vec<f32> = resized
            .into_raw()
            .iter()
            .map(|&v| v as f32 / 255.0)
            .collect();
        let plane = match &self.augment {
            Some(aff) => aff.apply(&plane, self.size, rng),
            None => plane,
        };
        Ok(to_normalized_rgb(&plane))
    }
}

/// Whether a JPEG stream ends its last scan with an end-of-image marker. JPEG decoders fill a
/// truncated scan with gray instead of failing; a marker FF D9 cannot occur inside
/// entropy-coded data (0xFF is stuffed as FF 00 there), so the last FF D9 must follow the last
/// start-of-scan FF DA (an EXIF thumbnail's own end marker comes before the main scan).
pub fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let last = |m: u8| bytes.windows(2).rposition(|w| w == [0xFF, m]);
    match (last(0xDA), last(0xD9)) {
        (Some(sos), Some(eoi)) => eoi > sos,
        _ => false,
    }
}

/// Replicate a [0, 1] gray plane to three channels normalized with the ImageNet statistics.
pub fn to_normalized_rgb(plane: &[f32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(3 * plane.len());
    for c in 0..3 {
        out.extend(
            plane
                .iter()
                .map(|&v| (v - IMAGENET_MEAN[c]) / IMAGENET_STD[c]),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_warp_and_a_quarter_turn() {
        let size = 5;
        let plane: Vec<f32> = (0..25).map(|v| v as f32).collect();
        let same = warp(&plane, size, 0.0, 0.0, 0.0, 1.0);
        assert!(same.iter().zip(&plane).all(|(a, b)| (a - b).abs() < 1e-5));
        // Rotating by 90 degrees four times gives the image back.
        let mut r = plane.clone();
        for _ in 0..4 {
            r = warp(&r, size, std::f32::consts::FRAC_PI_2, 0.0, 0.0, 1.0);
        }
        assert!(r.iter().zip(&plane).all(|(a, b)| (a - b).abs() < 1e-3));
        // A shift by one pixel moves the content and fills with zeros.
        let shifted = warp(&plane, size, 0.0, 1.0, 0.0, 1.0);
        assert_eq!(shifted[0], 0.0);
        assert!((shifted[1] - plane[0]).abs() < 1e-5);
    }

    #[test]
    fn normalization_uses_imagenet_statistics() {
        let out = to_normalized_rgb(&[0.485, 1.0]);
        assert!(out[0].abs() < 1e-6);
        assert!((out[1] - (1.0 - 0.485) / 0.229).abs() < 1e-5);
        assert!((out[3] - (1.0 - 0.456) / 0.224).abs() < 1e-5);
    }
}
