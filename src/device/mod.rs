//! Layer 1, the devices: which Burn backend and device a run uses ([`backend`]), the bridge
//! between a device's scores and the CPU objectives ([`bridge`]), and devices of other
//! machines ([`remote`]). Re-exported at the crate root (`rankrisk::backend`, ...).

pub mod backend;
pub mod bridge;
pub mod remote;
