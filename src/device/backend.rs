//! Run-time choice of the Burn backend.
//!
//! Burn 0.22 has no backend type parameter: a [`Device`] value picks the backend when the
//! program runs. This module maps the user's choice (`--backend`, or the `BURN_DEVICE`
//! environment variable) to an autodiff-enabled device, and tells the user clearly when the
//! wgpu backend has no adapter to run on.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use burn::tensor::Device;

use super::adapters::open_wgpu;
pub use super::adapters::{ALLOW_GL_ENV, AdapterSummary, NATIVE_APIS, wgpu_adapters, wgpu_choice};
pub use super::error::BackendError;
#[cfg(feature = "cuda")]
use super::panic_guard;

static WGPU_DEVICE: OnceLock<Result<Device, BackendError>> = OnceLock::new();

/// The environment variable that selects a backend when no flag is given.
pub const BACKEND_ENV: &str = "BURN_DEVICE";

/// The user's `BURN_DEVICE`, kept by [`keep_burn_default_on_cpu`] before it replaced it.
static USER_BACKEND_ENV: OnceLock<Option<String>> = OnceLock::new();

/// Make Burn's own default device (`Device::default()`) the CPU for the rest of the process,
/// keeping the user's backend choice for [`BackendKind::from_env`].
///
/// Burn reads `BURN_DEVICE` too, with its own names (no `cuda:N`, no `gpu`: it panics on those),
/// and without it picks wgpu; burn-optim rebuilds a saved optimizer's state on that default
/// device (the state moves to the parameters' device at the next step). So resuming a run on
/// flex would start the Vulkan driver, and a `BURN_DEVICE` in our syntax would panic. The
/// binary calls this first thing in `main`; it sets `BURN_DEVICE=flex` in the process's
/// environment (children inherit it) and answers `from_env` from the kept value. Calling it
/// again does nothing.
///
/// # Safety
/// It changes the process's environment: call it before any other thread starts (the first
/// line of `main`), as `std::env::set_var` requires.
pub unsafe fn keep_burn_default_on_cpu() {
    if USER_BACKEND_ENV.get().is_some() {
        return;
    }
    let user = std::env::var(BACKEND_ENV).ok();
    if USER_BACKEND_ENV.set(user).is_ok() {
        // SAFETY: the caller guarantees that no other thread runs (see the doc).
        unsafe { std::env::set_var(BACKEND_ENV, "flex") };
    }
}

/// The backends rankrisk can run on: written `wgpu`, `ndarray`, `flex`, `cuda` or `cuda:N`
/// (on the command line, in `BURN_DEVICE` and in configs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum BackendKind {
    /// GPU through wgpu (Vulkan, Metal, DX12 or GL, whichever the machine has; on a machine
    /// without a GPU, Mesa's software Vulkan driver lavapipe also works).
    Wgpu,
    /// CPU through the `ndarray` crate.
    Ndarray,
    /// CPU through Burn's pure-Rust `flex` backend.
    Flex,
    /// NVIDIA GPU `N` through Burn's CUDA backend (CubeCL's CUDA runtime); only in a build with
    /// the `cuda` feature.
    Cuda(usize),
}

impl From<BackendKind> for String {
    fn from(kind: BackendKind) -> String {
        kind.to_string()
    }
}

impl TryFrom<String> for BackendKind {
    type Error = BackendError;
    fn try_from(s: String) -> Result<Self, BackendError> {
        s.parse()
    }
}

impl BackendKind {
    /// Every backend that runs without a device index, in the order `rankrisk info` lists
    /// them (CUDA devices are listed apart).
    pub const ALL: [BackendKind; 3] = [BackendKind::Wgpu, BackendKind::Ndarray, BackendKind::Flex];

    /// Whether this build has the wgpu backend (the `wgpu` feature).
    pub const WGPU_COMPILED: bool = cfg!(feature = "wgpu");

    /// Whether this build has the CUDA backend (the `cuda` feature).
    pub const CUDA_COMPILED: bool = cfg!(feature = "cuda");

    /// The backend named by `BURN_DEVICE`, `Ok(None)` when the variable is unset or empty.
    ///
    /// # Errors
    /// [`BackendError::UnknownInEnv`] when the variable names no backend,
    /// [`BackendError::InEnv`] when it names one this build cannot open.
    pub fn from_env() -> Result<Option<BackendKind>, BackendError> {
        let value = match USER_BACKEND_ENV.get() {
            Some(kept) => kept.clone().ok_or(std::env::VarError::NotPresent),
            None => std::env::var(BACKEND_ENV),
        };
        match value {
            Ok(value) if !value.trim().is_empty() => value.parse().map(Some).map_err(|e| match e {
                BackendError::UnknownBackend(v) => BackendError::UnknownInEnv(v),
                other => BackendError::InEnv {
                    value,
                    message: other.to_string(),
                },
            }),
            _ => Ok(None),
        }
    }

    /// The lower-case name of the backend (without a device index).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Wgpu => "wgpu",
            BackendKind::Ndarray => "ndarray",
            BackendKind::Flex => "flex",
            BackendKind::Cuda(_) => "cuda",
        }
    }

    /// Whether the backend computes on the CPU of this machine.
    pub fn is_cpu(self) -> bool {
        matches!(self, BackendKind::Ndarray | BackendKind::Flex)
    }
}

impl Default for BackendKind {
    /// `flex`, Burn's pure-Rust CPU backend: it works everywhere without a driver and, in
    /// burn 0.22, is the fastest CPU backend here (ResNet-20 forward+backward at batch 64:
    /// 0.70 s on flex vs 33 s on ndarray, `examples/bench_models.rs`).
    fn default() -> Self {
        BackendKind::Flex
    }
}

impl fmt::Display for BackendKind {
    /// The name, with the device index for CUDA (`cuda:1`; `cuda` for device 0).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendKind::Cuda(i) if *i > 0 => write!(f, "cuda:{i}"),
            other => f.write_str(other.name()),
        }
    }
}

impl FromStr for BackendKind {
    type Err = BackendError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let (name, index) = match s.split_once(':') {
            Some((name, index)) => (name, Some(index)),
            None => (s.as_str(), None),
        };
        match (name, index) {
            ("wgpu" | "gpu", None) => Ok(BackendKind::Wgpu),
            ("ndarray", None) => Ok(BackendKind::Ndarray),
            ("flex", None) => Ok(BackendKind::Flex),
            ("cuda", _) if !BackendKind::CUDA_COMPILED => Err(BackendError::CudaNotCompiled),
            ("cuda", None) => Ok(BackendKind::Cuda(0)),
            ("cuda", Some(i)) => i
                .parse()
                .map(BackendKind::Cuda)
                .map_err(|_| BackendError::UnknownBackend(s.clone())),
            _ => Err(BackendError::UnknownBackend(s.clone())),
        }
    }
}

/// The plain (inference) device of a backend: no autodiff graph is recorded on it.
///
/// The wgpu device is opened once per process (the first call initializes wgpu's runtime on
/// the default adapter, a high-power GPU when there is one) and cloned afterwards.
///
/// # Errors
/// [`BackendError::NoWgpuAdapter`] when wgpu sees no adapter or cannot open the one it picked;
/// the message names the adapters it did see. [`BackendError::ThreadPool`] when the CPU thread
/// pool cannot start ([`super::thread_pool::start`]).
pub fn device(kind: BackendKind) -> Result<Device, BackendError> {
    // Every backend runs some work on the CPU pool (the objectives' solvers, the data).
    super::thread_pool::start()?;
    match kind {
        #[allow(deprecated)] // ndarray stays a supported CPU backend in rankrisk
        BackendKind::Ndarray => Ok(Device::ndarray()),
        BackendKind::Flex => Ok(Device::flex()),
        BackendKind::Wgpu => WGPU_DEVICE.get_or_init(open_wgpu).clone(),
        BackendKind::Cuda(index) => cuda_device(index),
    }
}

/// The autodiff device of a backend: parameters created on it record gradients.
///
/// # Errors
/// As [`device`].
pub fn autodiff_device(kind: BackendKind) -> Result<Device, BackendError> {
    device(kind).map(Device::autodiff)
}

/// CUDA device `index` (opened lazily by CubeCL's CUDA runtime on first use).
#[cfg(feature = "cuda")]
fn cuda_device(index: usize) -> Result<Device, BackendError> {
    panic_guard::install(&format!("cuda:{index}"));
    Ok(Device::cuda(index))
}

/// Without the `cuda` feature there is no CUDA device to open.
#[cfg(not(feature = "cuda"))]
fn cuda_device(_index: usize) -> Result<Device, BackendError> {
    Err(BackendError::CudaNotCompiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in BackendKind::ALL {
            assert_eq!(kind.name().parse::<BackendKind>().unwrap(), kind);
            assert_eq!(
                kind.to_string()
                    .to_uppercase()
                    .parse::<BackendKind>()
                    .unwrap(),
                kind
            );
        }
    }

    #[test]
    fn unknown_name_is_a_clear_error() {
        let err = "cuda".parse::<BackendKind>().unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("cuda") && text.contains("wgpu, ndarray, flex"),
            "{text}"
        );
    }

    #[test]
    fn cuda_names_parse_in_a_cuda_build_and_are_refused_clearly_otherwise() {
        for (text, index) in [("cuda", 0), ("CUDA:1", 1), ("cuda:3", 3)] {
            let compiled = BackendKind::CUDA_COMPILED;
            match text.parse::<BackendKind>() {
                Ok(kind) => {
                    assert!(compiled, "{text} parsed in a build without cuda");
                    assert_eq!(kind, BackendKind::Cuda(index));
                    assert_eq!(kind.to_string().parse::<BackendKind>().unwrap(), kind);
                }
                Err(e) => {
                    assert!(!compiled, "{text} refused in a build with cuda: {e}");
                    assert!(e.to_string().contains("--features cuda"), "{e}");
                }
            }
        }
        assert!("cuda:x".parse::<BackendKind>().is_err());
        assert!("flex:1".parse::<BackendKind>().is_err());
        if !BackendKind::CUDA_COMPILED {
            let err = device(BackendKind::Cuda(0)).unwrap_err().to_string();
            assert!(err.contains("not compiled"), "{err}");
        }
    }
}
