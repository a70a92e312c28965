//! An empty crate whose dependencies carry the workspace's features of shared third-party
//! crates (see its `Cargo.toml`), so that building or testing one member alone reuses the
//! artifacts of the workspace build instead of compiling Burn's tree again.
