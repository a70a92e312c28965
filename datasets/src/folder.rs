//! Images in folders: the class-per-subfolder layout (`root/<class>/**/<image>`, classes in
//! sorted name order as torchvision's ImageFolder numbers them) and Tiny-ImageNet-200
//! (`train/<wnid>/images/*.JPEG`, `val/images/*.JPEG` labelled by `val/val_annotations.txt`).
//! Images are decoded, converted to RGB or grayscale and resized to a fixed square size, into
//! an [`ImageSet`] of bytes.

use std::path::{Path, PathBuf};

use image::imageops::FilterType;

use crate::error::DataError;
use crate::imageset::ImageSet;

/// The classes the pAUC experiments treat as positive on Tiny-ImageNet-200: the birds, at
/// indices 11, 20, 21 and 22 of the sorted wnid list.
pub const TINY_IMAGENET_BIRDS: [u16; 4] = [11, 20, 21, 22];

const EXTENSIONS: [&str; 5] = ["jpg", "jpeg", "png", "bmp", "webp"];

fn is_image(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_lowercase().as_str()))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> DataError + '_ {
    move |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn images_under(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DataError> {
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let p = entry.map_err(io(dir))?.path();
        if p.is_dir() {
            images_under(&p, out)?;
        } else if is_image(&p) {
            out.push(p);
        }
    }
    Ok(())
}

/// Decode `files` (with their labels) into an [`ImageSet`] of `channels` (1 or 3) at
/// `size x size`.
///
/// # Errors
/// [`DataError::Image`] naming an unreadable or truncated file.
pub fn decode_images(
    name: &str,
    files: &[(PathBuf, u16)],
    channels: usize,
    size: usize,
    num_classes: usize,
) -> Result<ImageSet, DataError> {
    let mut pixels = Vec::with_capacity(files.len() * channels * size * size);
    for (path, _) in files {
        let fail = |message: String| DataError::Image {
            path: path.clone(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        if bytes.starts_with(&[0xFF, 0xD8]) && !crate::transform::jpeg_is_complete(&bytes) {
            return Err(fail("truncated JPEG".to_string()));
        }
        let img = image::load_from_memory(&bytes).map_err(|e| fail(e.to_string()))?;
        let img = img.resize_exact(size as u32, size as u32, FilterType::Triangle);
        if channels == 1 {
            pixels.extend(img.to_luma8().into_raw());
        } else {
            let rgb = img.to_rgb8();
            for c in 0..3 {
                pixels.extend(rgb.pixels().map(|p| p.0[c]));
            }
        }
    }
    Ok(ImageSet {
        name: name.to_string(),
        channels,
        height: size,
        width: size,
        pixels,
        labels: files.iter().map(|(_, l)| *l).collect(),
        source: (0..files.len()).collect(),
        num_classes,
    })
}

/// Read a class-per-subfolder tree. Returns the set and the class names (index = label).
///
/// # Errors
/// [`DataError::Invalid`] for a missing folder or one without class folders; as
/// [`decode_images`].
pub fn read_image_folder(
    root: &Path,
    channels: usize,
    size: usize,
) -> Result<(ImageSet, Vec<String>), DataError> {
    if !root.is_dir() {
        return Err(DataError::invalid(
            root.display().to_string(),
            "not a folder: expected one subfolder of images per class",
        ));
    }
    let mut classes: Vec<String> = std::fs::read_dir(root)
        .map_err(io(root))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    classes.sort();
    let mut files = Vec::new();
    for (k, c) in classes.iter().enumerate() {
        let mut found = Vec::new();
        images_under(&root.join(c), &mut found)?;
        found.sort();
        files.extend(found.into_iter().map(|p| (p, k as u16)));
    }
    if files.is_empty() {
        return Err(DataError::invalid(
            root.display().to_string(),
            "no images found in class subfolders",
        ));
    }
    let name = root
        .file_name()
        .map_or("images".into(), |s| s.to_string_lossy().into_owned());
    Ok((
        decode_images(&name, &files, channels, size, classes.len())?,
        classes,
    ))
}

/// Read Tiny-ImageNet-200's training or validation split at 64 x 64 RGB. Classes are the
/// wnids of `wnids.txt` in sorted order (so [`TINY_IMAGENET_BIRDS`] index them).
///
/// # Errors
/// [`DataError::Invalid`] saying what to download when the layout is missing;
/// [`DataError::Parse`] for an annotation line naming an unknown wnid; as [`decode_images`].
pub fn read_tiny_imagenet(root: &Path, train: bool) -> Result<ImageSet, DataError> {
    let wnids_path = root.join("wnids.txt");
    let text = std::fs::read_to_string(&wnids_path).map_err(|_| {
        DataError::invalid(
            root.display().to_string(),
            "wnids.txt not found: download tiny-imagenet-200.zip (http://cs231n.stanford.edu/tiny-imagenet-200.zip) and pass its tiny-imagenet-200 folder",
        )
    })?;
    let mut wnids: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    wnids.sort_unstable();
    let class_of = |w: &str| wnids.binary_search(&w).ok().map(|k| k as u16);
    let mut files = Vec::new();
    if train {
        for (k, w) in wnids.iter().enumerate() {
            let mut found = Vec::new();
            let dir = root.join("train").join(w).join("images");
            images_under(&dir, &mut found)?;
            found.sort();
            files.extend(found.into_iter().map(|p| (p, k as u16)));
        }
    } else {
        let ann = root.join("val").join("val_annotations.txt");
        let text = std::fs::read_to_string(&ann).map_err(io(&ann))?;
        for (i, line) in text.lines().enumerate() {
            let mut f = line.split('\t');
            let (Some(file), Some(w)) = (f.next(), f.next()) else {
                return Err(DataError::parse(&ann, i + 1, "expected <file>\\t<wnid>"));
            };
            let k = class_of(w)
                .ok_or_else(|| DataError::parse(&ann, i + 1, format!("unknown wnid '{w}'")))?;
            files.push((root.join("val").join("images").join(file), k));
        }
    }
    decode_images(
        if train {
            "Tiny-ImageNet-200-train"
        } else {
            "Tiny-ImageNet-200-val"
        },
        &files,
        3,
        64,
        wnids.len(),
    )
}
