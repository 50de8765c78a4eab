//! File trust, as OpenSSH's StrictModes: the config and catalog files may not be writable by
//! others, secret files not readable by them; a secret is read only through here and never
//! appears in an error message.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{ConfigError, Device};

/// A device's secrets, read once per request: every secret file's mode checked once, the
/// one-line secrets read. Handed to the transport (login) and the session (enable secret,
/// redaction); nothing else reads them.
#[derive(Clone, Default)]
pub struct Secrets {
    /// The login password (`password_file`).
    pub password: Option<String>,
    /// The private key's passphrase (`passphrase_file`).
    pub passphrase: Option<String>,
    /// The enable / privileged-mode secret (`enable_secret_file`).
    pub enable_secret: Option<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets { .. }")
    }
}

impl Secrets {
    /// Checks every secret file `device` names (key file included) and reads the
    /// one-line ones.
    pub fn read(device: &Device) -> Result<Secrets, ConfigError> {
        device.check_secret_modes()?;
        let read = |p: &Option<std::path::PathBuf>| p.as_deref().map(read_checked).transpose();
        Ok(Secrets {
            password: read(&device.password_file)?,
            passphrase: read(&device.passphrase_file)?,
            enable_secret: read(&device.enable_secret_file)?,
        })
    }

    /// Every secret value, for redaction from output.
    pub fn values(&self) -> impl Iterator<Item = &String> {
        [&self.password, &self.passphrase, &self.enable_secret]
            .into_iter()
            .flatten()
    }
}

/// Reads a one-line secret (password, passphrase, enable secret, `user:password`) after the
/// mode check. The trailing newline is removed; the value is never logged.
pub fn read_secret(path: &Path) -> Result<String, ConfigError> {
    check_secret_mode(path)?;
    read_checked(path)
}

fn read_checked(path: &Path) -> Result<String, ConfigError> {
    let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(text.trim_end_matches(['\r', '\n']).to_string())
}

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
