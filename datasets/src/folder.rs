//! Images in folders: the class-per-subfolder layout (`root/<class>/**/<image>`, classes in
//! sorted name order as torchvision's ImageFolder numbers them) and Tiny-ImageNet-200
//! (`train/<wnid>/images/*.JPEG`, `val/images/*.JPEG` labelled by `val/val_annotations.txt`).
//! Images are decoded, converted to RGB or grayscale and resized to a fixed square size, into
//! an [`ImageSet`] of bytes.

use std::path::{Path, PathBuf};

use image::imageops::FilterType;

use crate::error::DataError;
use crate::imageset::ImageSet;
use crate::memory::check_dense;
use crate::text::read_text;

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

/// Folders nested deeper than this under a class folder are refused (a symbolic link that
/// loops would otherwise recurse until the stack overflows).
const MAX_DEPTH: usize = 64;

fn images_under(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DataError> {
    images_under_at(dir, out, 0)
}

fn images_under_at(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), DataError> {
    if depth > MAX_DEPTH {
        return Err(DataError::invalid(
            dir.display().to_string(),
            format!("folders nested more than {MAX_DEPTH} deep (a symbolic link that loops?)"),
        ));
    }
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let p = entry.map_err(io(dir))?.path();
        if p.is_dir() {
            images_under_at(&p, out, depth + 1)?;
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
/// [`DataError::Invalid`] for `channels` other than 1 or 3 or a `size` of 0 or above 65,535;
/// [`DataError::TooLarge`] when the decoded set does not fit in memory; [`DataError::Image`]
/// naming an unreadable or truncated file.
pub fn decode_images(
    name: &str,
    files: &[(PathBuf, u16)],
    channels: usize,
    size: usize,
    num_classes: usize,
) -> Result<ImageSet, DataError> {
    if channels != 1 && channels != 3 {
        return Err(DataError::invalid(
            name,
            format!("{channels} channels: images are read as 1 (grayscale) or 3 (RGB)"),
        ));
    }
    if size == 0 || size > usize::from(u16::MAX) {
        return Err(DataError::invalid(
            name,
            format!("image size {size} must be between 1 and 65535 pixels"),
        ));
    }
    let values = check_dense(
        files.len(),
        channels.saturating_mul(size).saturating_mul(size),
        1,
        &format!(
            "{name} ({} images of {channels} x {size} x {size})",
            files.len()
        ),
    )?;
    let mut pixels = Vec::with_capacity(values);
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
/// [`DataError::Invalid`] for a missing folder, one without class folders or with more than
/// 65,536 of them; [`DataError::Io`] for an entry that cannot be read; as [`decode_images`].
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
    let mut classes: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io(root))? {
        let entry = entry.map_err(io(root))?;
        if entry.path().is_dir() {
            classes.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    classes.sort();
    check_class_count(root, classes.len())?;
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

/// Labels are `u16`: more classes than that cannot be told apart.
fn check_class_count(root: &Path, classes: usize) -> Result<(), DataError> {
    if classes > usize::from(u16::MAX) + 1 {
        return Err(DataError::invalid(
            root.display().to_string(),
            format!("{classes} classes: at most 65536 are supported"),
        ));
    }
    Ok(())
}

/// Read Tiny-ImageNet-200's training or validation split at 64 x 64 RGB. Classes are the
/// wnids of `wnids.txt` in sorted order (so [`TINY_IMAGENET_BIRDS`] index them).
///
/// # Errors
/// [`DataError::Invalid`] saying what to download when the layout is missing;
/// [`DataError::Parse`] for a repeated wnid or an annotation line naming an unknown wnid;
/// [`DataError::NotUtf8`]; as [`decode_images`].
pub fn read_tiny_imagenet(root: &Path, train: bool) -> Result<ImageSet, DataError> {
    let wnids_path = root.join("wnids.txt");
    let text = read_text(&wnids_path).map_err(|e| match e {
        DataError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            DataError::invalid(
                root.display().to_string(),
                "wnids.txt not found: download tiny-imagenet-200.zip (http://cs231n.stanford.edu/tiny-imagenet-200.zip) and pass its tiny-imagenet-200 folder",
            )
        }
        other => other,
    })?;
    let mut wnids: Vec<(&str, usize)> = text
        .lines()
        .enumerate()
        .map(|(k, l)| (l.trim(), k + 1))
        .filter(|(l, _)| !l.is_empty())
        .collect();
    wnids.sort_unstable();
    if let Some(w) = wnids.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(DataError::parse(
            &wnids_path,
            w[1].1.max(w[0].1),
            format!("wnid '{}' appears twice", w[0].0),
        ));
    }
    if wnids.is_empty() {
        return Err(DataError::invalid(
            wnids_path.display().to_string(),
            "no wnids: expected one class id per line",
        ));
    }
    check_class_count(root, wnids.len())?;
    let wnids: Vec<&str> = wnids.into_iter().map(|(w, _)| w).collect();
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
        let text = read_text(&ann)?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
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
