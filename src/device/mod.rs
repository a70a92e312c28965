//! Layer 1, the devices: which Burn backend and device a run uses ([`backend`]; the wgpu
//! adapter it takes, [`adapters`]; a panic on a GPU runtime's device thread ending the process
//! instead of hanging it, [`panic_guard`]; what can go wrong, [`error`]; the CPU thread pool, started so that
//! it fails with a message, [`thread_pool`]), the bridge between a device's scores and the CPU
//! objectives ([`bridge`]), and devices of other machines ([`remote`]). Re-exported at the
//! crate root (`rankrisk::backend`, ...).

pub mod adapters;
pub mod backend;
pub mod bridge;
pub mod error;
pub mod panic_guard;
pub mod remote;
pub mod thread_pool;
