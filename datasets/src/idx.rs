//! The IDX format of MNIST and Fashion-MNIST (LeCun et al.): a big-endian header (two zero
//! bytes, the element type 0x08 for unsigned bytes, the number of dimensions, then each
//! dimension as u32) and the data. Files may be gzip-compressed (`.gz`).

use std::io::Read;
use std::path::Path;

use crate::error::DataError;
use crate::imageset::ImageSet;

fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, DataError> {
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = std::fs::read(path).map_err(io)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(io)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Parse an IDX file of unsigned bytes: its dimensions and data.
///
/// # Errors
/// [`DataError::Io`]; [`DataError::Parse`] for a bad magic number, a type other than u8, or a
/// size that disagrees with the header.
pub fn read_idx(path: &Path) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let bytes = read_maybe_gz(path)?;
    let bad = |m: String| DataError::parse(path, 1, m);
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] != 0 {
        return Err(bad("not an IDX file (bad magic number)".into()));
    }
    if bytes[2] != 0x08 {
        return Err(bad(format!(
            "element type 0x{:02x}, only unsigned bytes (0x08) are supported",
            bytes[2]
        )));
    }
    let nd = bytes[3] as usize;
    let header = 4 + 4 * nd;
    if bytes.len() < header {
        return Err(bad("truncated header".into()));
    }
    let dims: Vec<usize> = (0..nd)
        .map(|k| u32::from_be_bytes(bytes[4 + 4 * k..8 + 4 * k].try_into().unwrap()) as usize)
        .collect();
    let expected: usize = dims.iter().product();
    if bytes.len() - header != expected {
        return Err(bad(format!(
            "header says {dims:?} ({expected} bytes) but {} data bytes follow",
            bytes.len() - header
        )));
    }
    Ok((dims, bytes[header..].to_vec()))
}

/// Read an image file and its label file (`train-images-idx3-ubyte[.gz]` and
/// `train-labels-idx1-ubyte[.gz]`) into a 1-channel [`ImageSet`] with `num_classes` classes.
///
/// # Errors
/// As [`read_idx`]; [`DataError::Invalid`] when the counts differ or a label is out of range.
pub fn read_idx_images(
    images: &Path,
    labels: &Path,
    num_classes: usize,
) -> Result<ImageSet, DataError> {
    let (idims, pixels) = read_idx(images)?;
    let (ldims, lbytes) = read_idx(labels)?;
    if idims.len() != 3 || ldims.len() != 1 || idims[0] != ldims[0] {
        return Err(DataError::invalid(
            images.display().to_string(),
            format!("images {idims:?} and labels {ldims:?} do not match"),
        ));
    }
    if let Some(pos) = lbytes.iter().position(|&l| l as usize >= num_classes) {
        return Err(DataError::parse(
            labels,
            pos + 1,
            format!(
                "label {} out of range for {num_classes} classes",
                lbytes[pos]
            ),
        ));
    }
    Ok(ImageSet {
        name: images
            .file_name()
            .map_or("idx".into(), |s| s.to_string_lossy().into_owned()),
        channels: 1,
        height: idims[1],
        width: idims[2],
        pixels,
        labels: lbytes.iter().map(|&l| l as u16).collect(),
        source: (0..idims[0]).collect(),
        num_classes,
    })
}

/// Read the training or test split of MNIST or Fashion-MNIST from a folder holding the four
/// standard files (gzip-compressed or not).
///
/// # Errors
/// [`DataError::Invalid`] naming the missing file and where to get it; as [`read_idx_images`].
pub fn read_mnist_style(dir: &Path, train: bool) -> Result<ImageSet, DataError> {
    let stem = if train { "train" } else { "t10k" };
    let find = |kind: &str| {
        let plain = dir.join(format!("{stem}-{kind}-ubyte"));
        let gz = dir.join(format!("{stem}-{kind}-ubyte.gz"));
        if plain.is_file() {
            Ok(plain)
        } else if gz.is_file() {
            Ok(gz)
        } else {
            Err(DataError::invalid(
                dir.display().to_string(),
                format!(
                    "{stem}-{kind}-ubyte[.gz] not found: put the four IDX files of MNIST or Fashion-MNIST here (datasets/fetch-test-data.sh fetches both)"
                ),
            ))
        }
    };
    let mut set = read_idx_images(&find("images-idx3")?, &find("labels-idx1")?, 10)?;
    set.name = format!(
        "{}-{}",
        dir.file_name()
            .map_or("mnist".into(), |s| s.to_string_lossy().into_owned()),
        if train { "train" } else { "test" }
    );
    Ok(set)
}
