//! The IDX format of MNIST and Fashion-MNIST (LeCun et al.): a big-endian header (two zero
//! bytes, the element type 0x08 for unsigned bytes, the number of dimensions, then each
//! dimension as u32) and the data. Files may be gzip-compressed (`.gz`).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{BinaryPart, DataError};
use crate::imageset::ImageSet;
use crate::memory::check_dense;

/// Read exactly `buf.len()` bytes, or say that `part` is truncated.
fn read_part(
    r: &mut impl Read,
    buf: &mut [u8],
    path: &Path,
    part: BinaryPart,
) -> Result<(), DataError> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => DataError::binary(path, part, "truncated"),
        _ => DataError::Io {
            path: path.to_path_buf(),
            source: e,
        },
    })
}

/// Parse an IDX file of unsigned bytes (gzip-compressed or not): its dimensions and data. The
/// data's size, the product of the header's dimensions, is checked before anything is
/// allocated ([`check_dense`]), so a header claiming a huge size (or a gzip bomb) is an error.
///
/// # Errors
/// [`DataError::Io`]; [`DataError::Binary`] for a bad magic number, a type other than u8, a
/// truncated header, or a size that disagrees with the header; [`DataError::TooLarge`] for a
/// size that does not fit in memory.
pub fn read_idx(path: &Path) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let opened = std::fs::File::open(path).map_err(io)?;
    let file_len = opened.metadata().map_err(io)?.len();
    let mut file = BufReader::new(opened);
    let gz = file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    let mut r: Box<dyn Read> = if gz {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let header = |m: String| DataError::binary(path, BinaryPart::Header, m);
    let mut magic = [0u8; 4];
    match read_part(&mut r, &mut magic, path, BinaryPart::Header) {
        Err(DataError::Binary { .. }) => {
            return Err(header(
                "not an IDX file (shorter than its magic number)".into(),
            ));
        }
        other => other?,
    }
    if magic[0] != 0 || magic[1] != 0 {
        return Err(header("not an IDX file (bad magic number)".into()));
    }
    if magic[2] != 0x08 {
        return Err(header(format!(
            "element type 0x{:02x}, only unsigned bytes (0x08) are supported",
            magic[2]
        )));
    }
    let nd = magic[3] as usize;
    let mut raw = vec![0u8; 4 * nd];
    read_part(&mut r, &mut raw, path, BinaryPart::Header)?;
    let dims: Vec<usize> = raw
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    let shape = shape_text(&dims);
    // One row per item of the first dimension, the product of the others as its width.
    let (rows, width) = match dims.split_first() {
        Some((&n, rest)) => (n, rest.iter().try_fold(1usize, |a, &b| a.checked_mul(b))),
        None => (1, Some(1)),
    };
    let Some(width) = width else {
        return Err(header(format!(
            "dimensions {shape} overflow the address space"
        )));
    };
    // An uncompressed file's size is known: a header that disagrees with it is refused before
    // anything is allocated.
    let header_len = 4 + 4 * nd as u64;
    let claimed = (rows as u128) * (width as u128);
    if !gz && u128::from(file_len.saturating_sub(header_len)) != claimed {
        return Err(DataError::binary(
            path,
            BinaryPart::Data,
            format!(
                "the header says {shape} ({claimed} bytes) but {} data bytes follow",
                file_len.saturating_sub(header_len)
            ),
        ));
    }
    let what = format!("{} (header {shape})", path.display());
    let expected = check_dense(rows, width, 1, &what)?;
    let mut data = Vec::with_capacity(expected);
    r.take(expected as u64 + 1)
        .read_to_end(&mut data)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => DataError::binary(
                path,
                BinaryPart::Data,
                format!("truncated: the header says {shape} ({expected} bytes)"),
            ),
            _ => io(e),
        })?;
    if data.len() != expected {
        let after = if data.len() > expected {
            "more".to_string()
        } else {
            data.len().to_string()
        };
        return Err(DataError::binary(
            path,
            BinaryPart::Data,
            format!("the header says {shape} ({expected} bytes) but {after} data bytes follow"),
        ));
    }
    Ok((dims, data))
}

/// Dimensions as `60000 x 28 x 28` (`scalar` for none).
fn shape_text(dims: &[usize]) -> String {
    if dims.is_empty() {
        return "scalar".into();
    }
    dims.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

/// Read an image file and its label file (`train-images-idx3-ubyte[.gz]` and
/// `train-labels-idx1-ubyte[.gz]`) into a 1-channel [`ImageSet`] with `num_classes` classes.
///
/// # Errors
/// As [`read_idx`]; [`DataError::Invalid`] when the counts differ, [`DataError::Binary`] for a
/// label out of range.
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
            format!(
                "images {} and labels {} do not match (expected n x height x width images and n \
                 labels)",
                shape_text(&idims),
                shape_text(&ldims)
            ),
        ));
    }
    if let Some(pos) = lbytes.iter().position(|&l| l as usize >= num_classes) {
        return Err(DataError::binary(
            labels,
            BinaryPart::Record(pos + 1),
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
