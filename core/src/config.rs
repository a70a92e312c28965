//! The objectives' configs in the shape of Burn's `#[derive(Config)]` (the required settings
//! in `new`, a `with_*` method for each defaulted one, public fields, JSON through serde with
//! the defaults filled in for absent keys, `save` / `load` / `load_binary`, `Display` as JSON),
//! written by one macro, so that the core crate needs no Burn and rankrisk's users keep Burn's
//! config style. `Provenance` fingerprints a config by its JSON, which is the JSON Burn's
//! derive writes for the same fields.

use std::path::PathBuf;

/// The value parser of every float flag (and so of every float key of a config file, which is
/// read through the flags): a number that is finite, so that what the flags accept is what a
/// saved `config.toml` reads back (rankrisk's run settings and recipe use it).
///
/// # Errors
/// A message with the text for a value that is not a number or not finite.
pub fn finite_f64(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(v) => Err(format!(
            "'{text}' is {v}: every float setting is a finite number"
        )),
        Err(e) => Err(format!("'{text}' is not a number ({e})")),
    }
}

/// The variable that sizes rankrisk's CPU threads (rayon's own): the CPU backends' pool and
/// the metrics' bootstrap and sorts read it through [`threads_requested`] alone.
pub const THREADS_ENV: &str = "RAYON_NUM_THREADS";

/// The thread count [`THREADS_ENV`] asks for: `Ok(None)` when it is unset, empty or 0
/// (rayon's "one per core"), `Ok(Some(n))` for a positive number.
///
/// # Errors
/// The variable's text when it is not a number of threads.
pub fn threads_requested() -> Result<Option<usize>, String> {
    match std::env::var(THREADS_ENV) {
        Ok(v) if !v.trim().is_empty() => match v.trim().parse::<usize>() {
            Ok(n) => Ok((n > 0).then_some(n)),
            Err(_) => Err(v),
        },
        _ => Ok(None),
    }
}

/// A config file or text that does not load.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The text is not the config's JSON (the message names the key or the position).
    #[error("not the config's JSON: {0}")]
    Format(String),
}

/// A config struct with `new(required...)` and `with_<name>(value)` for each defaulted field.
///
/// ```text
/// config! {
///     /// Settings of X.
///     pub struct XConfig {
///         required {
///             /// The FPR bound.
///             beta: f64,
///         }
///         defaults {
///             /// The margin.
///             margin: f64 = 1.0,
///         }
///     }
/// }
/// ```
macro_rules! config {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            required {
                $( $(#[$rmeta:meta])* $req:ident : $rty:ty, )*
            }
            defaults {
                $( $(#[$dmeta:meta])* $opt:ident : $oty:ty = $def:expr, )*
            }
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        pub struct $name {
            $( $(#[$rmeta])* pub $req: $rty, )*
            $( $(#[$dmeta])* pub $opt: $oty, )*
        }

        impl $name {
            /// The config with the required settings given and every other at its default.
            #[allow(clippy::new_without_default)]
            pub fn new($($req: $rty),*) -> Self {
                Self {
                    $($req,)*
                    $($opt: $def,)*
                }
            }

            /// Write the config's JSON to `file` (as Burn's `Config::save`).
            ///
            /// # Errors
            /// [`ConfigError::Io`](crate::ConfigError::Io) naming the file.
            pub fn save(
                &self,
                file: impl AsRef<std::path::Path>,
            ) -> Result<(), crate::ConfigError> {
                let path = file.as_ref();
                std::fs::write(path, self.to_string()).map_err(|source| {
                    crate::ConfigError::Io {
                        path: path.to_path_buf(),
                        source,
                    }
                })
            }

            /// The config in the JSON file `file` (as Burn's `Config::load`).
            ///
            /// # Errors
            /// [`ConfigError`](crate::ConfigError) naming the file, or the key.
            pub fn load(
                file: impl AsRef<std::path::Path>,
            ) -> Result<Self, crate::ConfigError> {
                let path = file.as_ref();
                let data = std::fs::read(path).map_err(|source| {
                    crate::ConfigError::Io {
                        path: path.to_path_buf(),
                        source,
                    }
                })?;
                Self::load_binary(&data)
            }

            /// The config in JSON `data` (as Burn's `Config::load_binary`).
            ///
            /// # Errors
            /// [`ConfigError::Format`](crate::ConfigError::Format) naming the key or
            /// the position.
            pub fn load_binary(data: &[u8]) -> Result<Self, crate::ConfigError> {
                serde_json::from_slice(data)
                    .map_err(|e| crate::ConfigError::Format(e.to_string()))
            }

            pastey::paste! {
                $(
                    #[doc = concat!("This config with `", stringify!($opt), "` set to `value`.")]
                    pub fn [<with_ $opt>](mut self, value: $oty) -> Self {
                        self.$opt = value;
                        self
                    }
                )*
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            /// The config's JSON; a defaulted key that is absent takes its default.
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(serde::Deserialize)]
                struct Given {
                    $( $req: $rty, )*
                    $( #[serde(default)] $opt: Option<$oty>, )*
                }
                let given = <Given as serde::Deserialize>::deserialize(d)?;
                #[allow(unused_mut)]
                let mut config = $name::new($(given.$req),*);
                $(
                    if let Some(value) = given.$opt {
                        config.$opt = value;
                    }
                )*
                Ok(config)
            }
        }

        impl std::fmt::Display for $name {
            /// The config's JSON, as Burn's configs print.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match serde_json::to_string_pretty(self) {
                    Ok(json) => f.write_str(&json),
                    Err(_) => Err(std::fmt::Error),
                }
            }
        }
    };
}
