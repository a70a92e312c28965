//! Devices of a data-parallel run, on this machine or on another: a backend name, or
//! `remote:ws://HOST:PORT` for a device that `rankrisk serve` hosts elsewhere (Burn's remote
//! devices over WebSocket, in a build with the `remote` feature).
//!
//! A remote device runs the tensor operations of its shard on the serving machine; the model's
//! autodiff graph, the optimizer's device and the objective's per-sample state stay in the
//! driving process (see [`crate::train::parallel`]).

use std::fmt;
use std::str::FromStr;

use burn::tensor::Device;

use crate::device::backend::{BackendError, BackendKind, device};

/// The prefix of a remote device's name.
const REMOTE: &str = "remote:";

/// One device of a data-parallel run: written as a backend name (`flex`, `cuda:1`) or
/// `remote:ws://HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum DeviceSpec {
    /// A backend of this machine.
    Local(BackendKind),
    /// The device served at this WebSocket address (`ws://HOST:PORT`).
    Remote(String),
}

impl DeviceSpec {
    /// Whether the remote devices are compiled in (the `remote` feature).
    pub const REMOTE_COMPILED: bool = cfg!(feature = "remote");
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Local(kind) => kind.fmt(f),
            DeviceSpec::Remote(url) => write!(f, "{REMOTE}{url}"),
        }
    }
}

impl FromStr for DeviceSpec {
    type Err = BackendError;

    fn from_str(s: &str) -> Result<Self, BackendError> {
        let s = s.trim();
        let Some(url) = s.strip_prefix(REMOTE) else {
            return s.parse().map(DeviceSpec::Local);
        };
        if !DeviceSpec::REMOTE_COMPILED {
            return Err(BackendError::RemoteNotCompiled);
        }
        let host = url.strip_prefix("ws://").unwrap_or_default();
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(BackendError::BadRemoteAddress(url.to_string()));
        }
        Ok(DeviceSpec::Remote(url.to_string()))
    }
}

impl From<DeviceSpec> for String {
    fn from(spec: DeviceSpec) -> String {
        spec.to_string()
    }
}

impl TryFrom<String> for DeviceSpec {
    type Error = BackendError;
    fn try_from(s: String) -> Result<Self, BackendError> {
        s.parse()
    }
}

/// The autodiff device of `spec`; a remote one is connected here (its server must be up).
///
/// # Errors
/// As [`device`] for a local backend; [`BackendError::RemoteConnect`] when the server cannot be
/// reached; [`BackendError::RemoteNotCompiled`] without the `remote` feature.
pub fn autodiff_device_of(spec: &DeviceSpec) -> Result<Device, BackendError> {
    match spec {
        DeviceSpec::Local(kind) => device(*kind).map(Device::autodiff),
        DeviceSpec::Remote(url) => connect(url).map(Device::autodiff),
    }
}

#[cfg(feature = "remote")]
fn connect(url: &str) -> Result<Device, BackendError> {
    use burn::remote::RemoteHost;
    Device::remote_options(&RemoteHost::websocket(url))
        .init()
        .map_err(|e| BackendError::RemoteConnect {
            url: url.to_string(),
            message: e.to_string(),
        })
}

#[cfg(not(feature = "remote"))]
fn connect(_url: &str) -> Result<Device, BackendError> {
    Err(BackendError::RemoteNotCompiled)
}

/// Serve the device of `kind` to remote clients on `listener` (a bound TCP socket; clients dial
/// `ws://ADDRESS`), blocking this thread until the process receives Ctrl+C or `SIGTERM`.
///
/// # Errors
/// [`BackendError`] when the device cannot be opened or the server cannot start;
/// [`BackendError::RemoteNotCompiled`] without the `remote` feature.
pub fn serve(kind: BackendKind, listener: std::net::TcpListener) -> Result<(), BackendError> {
    serve_device(device(kind)?, listener)
}

#[cfg(feature = "remote")]
fn serve_device(device: Device, listener: std::net::TcpListener) -> Result<(), BackendError> {
    use burn::server::{RemoteServer, WebSocketTransport};
    RemoteServer::new([device])
        .serve(WebSocketTransport::from_listener(listener))
        .map_err(|e| BackendError::Serve(e.to_string()))
}

#[cfg(not(feature = "remote"))]
fn serve_device(_device: Device, _listener: std::net::TcpListener) -> Result<(), BackendError> {
    Err(BackendError::RemoteNotCompiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_round_trip() {
        assert_eq!(
            "flex".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::Local(BackendKind::Flex)
        );
        assert!("nope".parse::<DeviceSpec>().is_err());
        let compiled = DeviceSpec::REMOTE_COMPILED;
        match "remote:ws://10.0.0.2:3000".parse::<DeviceSpec>() {
            Ok(spec) => {
                assert!(compiled, "parsed in a build without the remote feature");
                assert_eq!(spec, DeviceSpec::Remote("ws://10.0.0.2:3000".into()));
                assert_eq!(spec.to_string().parse::<DeviceSpec>().unwrap(), spec);
            }
            Err(e) => {
                assert!(!compiled, "{e}");
                assert!(e.to_string().contains("--features remote"), "{e}");
            }
        }
        if compiled {
            for bad in [
                "remote:",
                "remote:http://x:1",
                "remote:ws://",
                "remote:ws://a b",
            ] {
                assert!(bad.parse::<DeviceSpec>().is_err(), "{bad}");
            }
        }
    }
}
