//! The graphics adapters wgpu sees and the one `--backend wgpu` takes: Vulkan, Metal or DX12,
//! never OpenGL (issue 53: Burn's runtime on wgpu's GL layer can hang for good), with the
//! adapter named on standard error when the device opens and the device-thread panic guard
//! installed ([`super::panic_guard`]).

use std::fmt;
#[cfg(feature = "wgpu")]
use std::sync::Mutex;
use std::sync::OnceLock;

use burn::tensor::Device;
#[cfg(feature = "wgpu")]
use burn::tensor::wgpu::{WgpuBackend, wgpu};

use super::error::BackendError;
#[cfg(feature = "wgpu")]
use super::panic_guard;

/// One graphics adapter that wgpu can see.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AdapterSummary {
    /// Adapter name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe.
    pub name: String,
    /// Discrete GPU, integrated GPU, virtual GPU, CPU or other.
    pub device_type: String,
    /// Graphics API (Vulkan, Metal, Dx12, Gl).
    pub api: String,
    /// Driver name and version as the driver reports them.
    pub driver: String,
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}, {}, driver: {}]",
            self.name, self.device_type, self.api, self.driver
        )
    }
}

/// Instances must not be created concurrently: the Vulkan loader is not safe under that.
#[cfg(feature = "wgpu")]
static ADAPTER_LOCK: Mutex<()> = Mutex::new(());
static ADAPTERS: OnceLock<Vec<AdapterSummary>> = OnceLock::new();

/// The adapters wgpu enumerates on this machine (all compiled graphics APIs), listed once per
/// process and cached.
/// A build without the `wgpu` feature sees none.
pub fn wgpu_adapters() -> &'static [AdapterSummary] {
    ADAPTERS.get_or_init(enumerate_adapters)
}

#[cfg(not(feature = "wgpu"))]
fn enumerate_adapters() -> Vec<AdapterSummary> {
    Vec::new()
}

#[cfg(feature = "wgpu")]
fn enumerate_adapters() -> Vec<AdapterSummary> {
    let _guard = ADAPTER_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::all(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters =
        futures_lite::future::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    adapters
        .iter()
        .map(|adapter| {
            let info = adapter.get_info();
            let driver = match (info.driver.is_empty(), info.driver_info.is_empty()) {
                (true, true) => "unknown".to_string(),
                (false, true) => info.driver.clone(),
                (true, false) => info.driver_info.clone(),
                (false, false) => format!("{} {}", info.driver, info.driver_info),
            };
            AdapterSummary {
                name: info.name.clone(),
                device_type: format!("{:?}", info.device_type),
                api: format!("{:?}", info.backend),
                driver,
            }
        })
        .collect()
}

#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
fn describe_adapters(adapters: &[AdapterSummary]) -> String {
    if adapters.is_empty() {
        "none".to_string()
    } else {
        adapters
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Set to `1`, this environment variable lets `--backend wgpu` run on an OpenGL adapter when
/// there is no other (to reproduce issue 53 or to try a driver; a panic on a device thread
/// still ends the run, a silent deadlock does not).
pub const ALLOW_GL_ENV: &str = "RANKRISK_WGPU_ALLOW_GL";

/// The graphics APIs rankrisk runs wgpu on, best first, as cubecl's automatic choice orders
/// them (cubecl-wgpu 0.11.3 `AutoGraphicsApi::chain`). OpenGL is left out: Burn's runtime on
/// wgpu's GL layer can hang (issue 53, docs/BACKENDS.md "OpenGL").
pub const NATIVE_APIS: [&str; 3] = ["Vulkan", "Metal", "Dx12"];

/// The graphics API (its name in [`NATIVE_APIS`]) and adapter wgpu will take among `adapters`: the first API of
/// [`NATIVE_APIS`] with a hardware adapter, else the first with any (a software one such as
/// lavapipe), and on it the adapter wgpu's high-performance preference ranks first (discrete,
/// integrated, virtual, other, CPU). `None` when only OpenGL (or nothing) is there.
pub fn wgpu_choice(adapters: &[AdapterSummary]) -> Option<(&'static str, &AdapterSummary)> {
    let on = |api: &'static str| adapters.iter().filter(move |a| a.api == api);
    let api = NATIVE_APIS
        .into_iter()
        .find(|api| on(api).any(|a| a.device_type != "Cpu"))
        .or_else(|| NATIVE_APIS.into_iter().find(|api| on(api).next().is_some()))?;
    let rank = |a: &AdapterSummary| match a.device_type.as_str() {
        "DiscreteGpu" => 0,
        "IntegratedGpu" => 1,
        "VirtualGpu" => 2,
        "Other" => 3,
        _ => 4,
    };
    let adapter = on(api).min_by_key(|a| rank(a))?;
    Some((api, adapter))
}

#[cfg(not(feature = "wgpu"))]
pub(super) fn open_wgpu() -> Result<Device, BackendError> {
    Err(BackendError::WgpuNotCompiled)
}

#[cfg(feature = "wgpu")]
pub(super) fn open_wgpu() -> Result<Device, BackendError> {
    let adapters = wgpu_adapters();
    if adapters.is_empty() {
        return Err(BackendError::NoWgpuAdapter {
            reason: "no adapter enumerated".to_string(),
            seen: describe_adapters(adapters),
        });
    }
    let gl_allowed = std::env::var(ALLOW_GL_ENV).is_ok_and(|v| v == "1");
    let gl = adapters.iter().find(|a| a.api == "Gl");
    let Some((api, adapter)) = wgpu_choice(adapters).or(match gl {
        Some(a) if gl_allowed => {
            eprintln!(
                "wgpu: {ALLOW_GL_ENV}=1: running on OpenGL, which can hang (docs/BACKENDS.md)"
            );
            Some(("Gl", a))
        }
        _ => None,
    }) else {
        return Err(BackendError::OpenGlOnly {
            seen: describe_adapters(adapters),
        });
    };
    let _guard = ADAPTER_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let api = match api {
        "Vulkan" => WgpuBackend::Vulkan,
        "Metal" => WgpuBackend::Metal,
        "Dx12" => WgpuBackend::Dx12,
        _ => WgpuBackend::Gl,
    };
    let device = Device::wgpu_options()
        .graphics_api(api)
        .init()
        .map_err(|err| BackendError::NoWgpuAdapter {
            reason: err.to_string(),
            seen: describe_adapters(adapters),
        })?;
    let taken = match std::env::var("CUBECL_WGPU_DEFAULT_DEVICE") {
        Ok(pick) => format!(
            "the {} adapter CUBECL_WGPU_DEFAULT_DEVICE={pick} picks",
            adapter.api
        ),
        Err(_) => adapter.to_string(),
    };
    panic_guard::install(&format!("wgpu on {taken}"));
    eprintln!("wgpu: running on {taken}");
    Ok(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(name: &str, device_type: &str, api: &str) -> AdapterSummary {
        AdapterSummary {
            name: name.into(),
            device_type: device_type.into(),
            api: api.into(),
            driver: "test".into(),
        }
    }

    #[test]
    fn opengl_alone_is_refused_and_vulkan_preferred() {
        let gl = adapter("llvmpipe (LLVM 15.0.6, 256 bits)", "Cpu", "Gl");
        assert_eq!(wgpu_choice(std::slice::from_ref(&gl)), None);
        assert_eq!(wgpu_choice(&[]), None);
        let lavapipe = adapter("llvmpipe (LLVM 15.0.6, 256 bits)", "Cpu", "Vulkan");
        let both = [gl.clone(), lavapipe.clone()];
        assert_eq!(wgpu_choice(&both), Some(("Vulkan", &lavapipe)));
        // A GPU on Vulkan comes before lavapipe, whatever the listing's order; a GL adapter
        // with a GPU never wins.
        let card = adapter("NVIDIA H100", "DiscreteGpu", "Vulkan");
        let gl_card = adapter("NVIDIA H100/PCIe", "DiscreteGpu", "Gl");
        let all = [gl_card, lavapipe.clone(), card.clone()];
        assert_eq!(wgpu_choice(&all), Some(("Vulkan", &card)));
        // A software Vulkan adapter is taken over a hardware API that comes later only when
        // that API has no GPU either.
        let dx = adapter("Microsoft Basic Render Driver", "Cpu", "Dx12");
        assert_eq!(
            wgpu_choice(&[dx.clone(), lavapipe.clone()]),
            Some(("Vulkan", &lavapipe))
        );
        let err = BackendError::OpenGlOnly {
            seen: describe_adapters(std::slice::from_ref(&gl)),
        }
        .to_string();
        assert!(
            err.contains("llvmpipe") && err.contains("Gl") && err.contains("mesa-vulkan-drivers"),
            "{err}"
        );
    }

    #[test]
    fn empty_adapter_list_is_described() {
        assert_eq!(describe_adapters(&[]), "none");
        let one = AdapterSummary {
            name: "llvmpipe".into(),
            device_type: "Cpu".into(),
            api: "Vulkan".into(),
            driver: "llvmpipe Mesa 22.3.6".into(),
        };
        assert_eq!(
            describe_adapters(&[one]),
            "llvmpipe [Cpu, Vulkan, driver: llvmpipe Mesa 22.3.6]"
        );
    }
}
