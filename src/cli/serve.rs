//! `rankrisk serve`: host this machine's device for data-parallel runs on other machines
//! (`--devices flex,remote:ws://THIS_HOST:PORT` there), in a build with the `remote` feature.

use std::io::Write as _;
use std::net::TcpListener;

use clap::Args;

use rankrisk::device::remote::serve;
use rankrisk::train::run::BackendArg;

/// Arguments of `rankrisk serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The device to host.
    #[command(flatten)]
    pub backend: BackendArg,
    /// TCP port to listen on.
    #[arg(long, default_value_t = 3000)]
    pub port: u16,
    /// Address to listen on (`0.0.0.0`: every interface; WebSocket is unencrypted, so keep it
    /// on a trusted network).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
}

/// Serve until Ctrl+C or SIGTERM.
///
/// # Errors
/// A message when the backend, the address or the server fails.
pub fn run(args: &ServeArgs) -> Result<(), String> {
    let kind = args.backend.resolve().map_err(|e| e.to_string())?;
    let address = format!("{}:{}", args.host, args.port);
    let listener =
        TcpListener::bind(&address).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let _ = writeln!(
        std::io::stderr(),
        "serving {kind} at ws://{bound} (Ctrl+C stops)"
    );
    serve(kind, listener).map_err(|e| e.to_string())
}
