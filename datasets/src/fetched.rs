//! Where `datasets/fetch-test-data.sh` puts the real test data: `$RANKRISK_TEST_DATA`, else
//! `datasets/test-data/` of the checkout this crate was compiled from, else (when that folder is
//! gone, e.g. a build directory shared between checkouts) `datasets/test-data/` under the
//! current directory. Each item (chexpert, xray, foolbox, fashion-mnist, mnist, keel, libsvm) is
//! a folder with a `.done` stamp once complete.

use std::path::{Path, PathBuf};

/// The cache folder.
pub fn root() -> PathBuf {
    std::env::var_os("RANKRISK_TEST_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-data");
            let here = Path::new("datasets").join("test-data");
            if !built.is_dir() && here.is_dir() {
                here
            } else {
                built
            }
        })
}

/// The folder of item `name` if it has been fetched completely.
pub fn item(name: &str) -> Option<PathBuf> {
    let dir = root().join(name);
    dir.join(".done").is_file().then_some(dir)
}

/// For tests: the item's folder, or `None` after printing that it is skipped; panics instead
/// when `RANKRISK_REQUIRE_TEST_DATA=1` (CI), so missing data cannot pass silently.
pub fn require(name: &str) -> Option<PathBuf> {
    if let Some(dir) = item(name) {
        return Some(dir);
    }
    let msg = format!(
        "{} missing: run datasets/fetch-test-data.sh",
        root().join(name).display()
    );
    if std::env::var_os("RANKRISK_REQUIRE_TEST_DATA").is_some_and(|v| v == "1") {
        panic!("{msg}");
    }
    eprintln!("skipped: {msg}");
    None
}
