//! Image decoding throughput for CheXpert-size JPEGs on one thread: the real X-ray JPEGs from
//! `datasets/fetch-test-data.sh`, re-encoded at CheXpert-v1.0-small's size (320 pixels wide,
//! JPEG quality 90), then decoded, resized to 224 or 320 and normalized, with and without the
//! random affine augmentation. Also the original full-size files.
//!
//! `cargo run --release --example bench_decode` (after fetching the test data).

use std::path::PathBuf;
use std::time::Instant;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rankrisk_datasets::transform::XrayTransform;

fn images_per_second(files: &[PathBuf], t: &XrayTransform, reps: usize) -> f64 {
    let mut rng = StdRng::seed_from_u64(0);
    let start = Instant::now();
    for _ in 0..reps {
        for f in files {
            std::hint::black_box(t.load(f, &mut rng).expect("decodes"));
        }
    }
    (reps * files.len()) as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let xray = rankrisk_datasets::fetched::root().join("xray");
    let mut originals: Vec<PathBuf> = match std::fs::read_dir(&xray) {
        Ok(d) => d
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jpeg"))
            .collect(),
        Err(_) => {
            eprintln!(
                "{} not found: run datasets/fetch-test-data.sh first",
                xray.display()
            );
            std::process::exit(2);
        }
    };
    originals.sort();
    let tmp = std::env::temp_dir().join(format!("rankrisk-decode-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut small = Vec::new();
    let mut sizes = Vec::new();
    for (k, f) in originals.iter().enumerate() {
        let img = image::open(f).unwrap().to_luma8();
        let (w, h) = img.dimensions();
        let nh = (320.0 * h as f64 / w as f64).round() as u32;
        let resized = image::imageops::resize(&img, 320, nh, FilterType::Triangle);
        let path = tmp.join(format!("{k}.jpg"));
        let mut out = std::fs::File::create(&path).unwrap();
        JpegEncoder::new_with_quality(&mut out, 90)
            .encode_image(&resized)
            .unwrap();
        sizes.push(std::fs::metadata(&path).unwrap().len());
        small.push(path);
    }
    let mean_kb = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64 / 1024.0;
    println!(
        "{} real X-rays; CheXpert-size copies 320 px wide, {mean_kb:.0} KiB on average",
        small.len()
    );
    println!("| files | transform | images/s (1 thread) |");
    println!("|---|---|---|");
    for (what, files, reps) in [
        ("CheXpert-size (320 px wide)", &small, 20),
        ("original full size", &originals, 2),
    ] {
        for (name, t) in [
            ("eval 224", XrayTransform::eval(224)),
            ("train 224 (random affine)", XrayTransform::train(224)),
            ("eval 320", XrayTransform::eval(320)),
        ] {
            println!(
                "| {what} | {name} | {:.0} |",
                images_per_second(files, &t, reps)
            );
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
}
