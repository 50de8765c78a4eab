//! File trust, as OpenSSH's StrictModes: the config and catalog files may not be writable by
//! others, secret files not readable by them; a secret is read only through here and never
//! appears in an error message.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{ConfigError, Device};

impl Device {
    /// Every secret file this device names, with its key.
    pub fn secret_files(&self) -> Vec<(&'static str, &Path)> {
        [
            ("password_file", &self.password_file),
            ("key_file", &self.key_file),
            ("passphrase_file", &self.passphrase_file),
            ("enable_secret_file", &self.enable_secret_file),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.as_deref().map(|p| (k, p)))
        .collect()
    }

    /// Checks that no secret file can be read or written by group or others.
    pub fn check_secret_modes(&self) -> Result<(), ConfigError> {
        for (_, path) in self.secret_files() {
            check_secret_mode(path)?;
        }
        Ok(())
    }

    /// Reads a one-line secret (password, passphrase, enable secret) after the mode check.
    /// The trailing newline is removed; the value is never logged.
    pub fn read_secret(path: &Path) -> Result<String, ConfigError> {
        check_secret_mode(path)?;
        let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(text.trim_end_matches(['\r', '\n']).to_string())
    }
}

/// Refuses a secret readable or writable by group or others (OpenSSH's rule for keys).
pub fn check_secret_mode(path: &Path) -> Result<(), ConfigError> {
    let meta = fs::metadata(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(ConfigError::UnsafeMode {
            path: path.to_path_buf(),
            mode,
            why: "group or others can access a secret",
            fix: "chmod 600 it",
        });
    }
    Ok(())
}

/// Refuses a config file that group or others can write (they could add devices or lift
/// policy), like sshd's StrictModes.
pub fn check_config_mode(path: &Path) -> Result<(), ConfigError> {
    let meta = fs::metadata(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(ConfigError::UnsafeMode {
            path: path.to_path_buf(),
            mode,
            why: "group or others can change the configuration",
            fix: "chmod go-w it",
        });
    }
    Ok(())
}
