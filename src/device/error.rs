//! What can go wrong while choosing or opening a backend, in a file of its own so that the
//! backend choice ([`super::backend`]) and the wgpu adapter choice ([`super::adapters`]) both
//! name it without importing each other.

/// What went wrong while choosing or opening a backend.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// The name is not one of the compiled backends.
    #[error("unknown backend '{0}': expected one of wgpu, ndarray, flex")]
    UnknownBackend(String),
    /// CUDA was asked for in a build without the `cuda` feature.
    #[error(
        "the cuda backend is not compiled into this build: rebuild with `cargo build --release \
         --features cuda` (docs/BACKENDS.md, \"CUDA\", says what that build needs), or pick one of \
         wgpu, ndarray, flex"
    )]
    CudaNotCompiled,
    /// wgpu was asked for in a build without the `wgpu` feature.
    #[error(
        "the wgpu backend is not compiled into this build: rebuild with `cargo build --release \
         --features wgpu` (docs/BACKENDS.md, \"Builds\"), or pick a CPU backend with --backend flex"
    )]
    WgpuNotCompiled,
    /// A remote device was asked for in a build without the `remote` feature.
    #[error(
        "remote devices are not compiled into this build: rebuild with `cargo build --release \
         --features remote` (docs/BACKENDS.md, \"Several machines\", says what it adds)"
    )]
    RemoteNotCompiled,
    /// A remote device's address is not `ws://HOST:PORT`.
    #[error("remote device '{0}': expected remote:ws://HOST:PORT")]
    BadRemoteAddress(String),
    /// The remote device's server could not be reached.
    #[error("remote device {url}: {message} (is `rankrisk serve` running there?)")]
    RemoteConnect {
        /// The address dialed.
        url: String,
        /// Burn's connection error.
        message: String,
    },
    /// The device server could not start.
    #[error("cannot serve the device: {0}")]
    Serve(String),
    /// `BURN_DEVICE` names none of the compiled backends.
    #[error("BURN_DEVICE: unknown backend '{0}': expected one of wgpu, ndarray, flex")]
    UnknownInEnv(String),
    /// `BURN_DEVICE` names a backend this build cannot open (not compiled, a bad index).
    #[error("BURN_DEVICE={value}: {message}")]
    InEnv {
        /// The variable's value.
        value: String,
        /// Why it cannot be opened.
        message: String,
    },
    /// wgpu could not open a device.
    #[error(
        "wgpu found no usable adapter ({reason}); adapters seen: {seen}. On a machine without a \
         GPU install Mesa's software Vulkan driver (Debian: apt-get install mesa-vulkan-drivers) \
         or pick a CPU backend with --backend ndarray"
    )]
    NoWgpuAdapter {
        /// The reason wgpu gave.
        reason: String,
        /// The adapters wgpu enumerated, formatted for the message ("none" when empty).
        seen: String,
    },
    /// wgpu sees OpenGL adapters only, which rankrisk does not run on.
    #[error(
        "wgpu sees only OpenGL adapters ({seen}): rankrisk runs wgpu on Vulkan, Metal or DX12 only, \
         because Burn's runtime on wgpu's OpenGL layer can hang for good (a device thread panics \
         with \"Could not lock adapter context\" under load, docs/BACKENDS.md). Install a Vulkan \
         driver (without a GPU, Mesa's software one: Debian apt-get install mesa-vulkan-drivers) \
         or pick a CPU backend with --backend flex"
    )]
    OpenGlOnly {
        /// The adapters wgpu enumerated, formatted for the message.
        seen: String,
    },
    /// The CPU thread pool could not be started.
    #[error("the CPU thread pool ({setting}): {message}")]
    ThreadPool {
        /// What set the pool's size (`RAYON_NUM_THREADS=...`, or one per core).
        setting: String,
        /// Why it could not start.
        message: String,
    },
}
