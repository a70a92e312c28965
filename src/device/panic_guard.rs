//! A panic on one of a GPU runtime's device threads ends the process with an error.
//!
//! Burn's GPU backends run every device operation on threads of their own (cubecl's device
//! services, named `DS<stage>-<type>-<index>`: the fusion stream upstream, the device server
//! downstream). When one of them panics (wgpu's OpenGL layer, for one, panics when it cannot
//! lock its adapter context: wgpu-hal 30.0.1 `gles/device.rs`), the caller's queued call waits
//! for an answer that never comes: the process hangs with no CPU time moving (issue 53). The
//! guard installed here turns that into an exit with status 2 and a message on standard error
//! that names the thread, the adapter and what to do; panics on any other thread go to the
//! hook that was there before, unchanged.

use std::sync::{Mutex, Once};

/// The exit status of a process whose device thread panicked (the CLI's status for errors).
pub const DEVICE_PANIC_EXIT: i32 = 2;

/// The devices a guard was installed for, for the message (`wgpu on llvmpipe ...`).
static DEVICES: Mutex<Vec<String>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// Whether a thread of this name is one of the GPU runtime's device threads (cubecl 0.11's
/// device services name theirs `DSU-...` and `DSD-...`).
pub fn is_device_thread(name: &str) -> bool {
    name.starts_with("DSU-") || name.starts_with("DSD-")
}

/// Install the guard (once per process; later calls add `device` to the message): from now on
/// a panic on a device thread prints the panic as the previous hook does, then an error that
/// names `device` (the backend and adapter, e.g. `wgpu on llvmpipe [Cpu, Vulkan]`) and exits
/// with [`DEVICE_PANIC_EXIT`]. The backend module calls it when it opens a GPU device.
pub fn install(device: &str) {
    if let Ok(mut devices) = DEVICES.lock()
        && !devices.iter().any(|d| d == device)
    {
        devices.push(device.to_string());
    }
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            let thread = std::thread::current();
            let Some(name) = thread.name().filter(|n| is_device_thread(n)) else {
                return;
            };
            let devices = DEVICES
                .lock()
                .map(|d| d.join("; "))
                .unwrap_or_else(|_| "a GPU device".to_string());
            eprintln!("{}", message(name, &devices));
            std::process::exit(DEVICE_PANIC_EXIT);
        }));
    });
}

/// The error printed when the device thread `thread` of `devices` panicked.
pub fn message(thread: &str, devices: &str) -> String {
    format!(
        "error: the GPU runtime's device thread {thread} panicked (device: {devices}); Burn's \
         runtime cannot continue after that, so the run stops here instead of waiting forever. \
         Run again (a device that timed out under load may not next time), or on a CPU backend \
         with --backend flex; on a machine without a GPU use Mesa's Vulkan driver lavapipe \
         (Debian: apt-get install mesa-vulkan-drivers), see docs/BACKENDS.md"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_threads_are_cubecls_service_threads() {
        assert!(is_device_thread("DSD-0-0"));
        assert!(is_device_thread("DSU-3-1"));
        for other in ["main", "DS", "rayon", "DSX-0-0", "tests::device_threads"] {
            assert!(!is_device_thread(other), "{other}");
        }
    }

    #[test]
    fn message_names_the_thread_the_device_and_what_to_do() {
        let m = message("DSD-0-0", "wgpu on llvmpipe [Cpu, Vulkan]");
        assert!(m.contains("DSD-0-0") && m.contains("llvmpipe"), "{m}");
        assert!(
            m.contains("--backend flex") && m.contains("mesa-vulkan-drivers"),
            "{m}"
        );
    }
}
