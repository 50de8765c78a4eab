//! Secrets: a device's secret files are trust-checked ([`super::trust`]) and read only
//! through here, one line each; a secret's value never appears in an error message.

use std::fs;
use std::path::Path;

use super::trust::{self, Role};
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
    /// Checks every file `device` names (secrets, key file, known_hosts; see
    /// [`Device::check_files`]) and reads the one-line secrets.
    pub fn read(device: &Device) -> Result<Secrets, ConfigError> {
        device.check_files()?;
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
/// trust check. The trailing newline is removed; the value is never logged.
pub fn read_secret(path: &Path) -> Result<String, ConfigError> {
    check_secret_mode(path)?;
    read_checked(path)
}

/// A secret file holds one line: the value, optionally followed by one newline. Anything
/// after that (a second line, a forgotten note, two secrets pasted together) is refused
/// rather than guessed at; the message never shows the contents.
fn read_checked(path: &Path) -> Result<String, ConfigError> {
    let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text);
    if value.contains(['\n', '\r']) {
        return Err(ConfigError::Secret {
            path: path.to_path_buf(),
            problem: "holds more than one line; a secret file holds exactly one (the value)",
        });
    }
    Ok(value.to_string())
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

    /// Checks every secret file (owner, mode, directories; see [`super::trust`]).
    pub fn check_secret_modes(&self) -> Result<(), ConfigError> {
        for (_, path) in self.secret_files() {
            check_secret_mode(path)?;
        }
        Ok(())
    }

    /// Every file a session with this device would read, trust-checked as a run does before
    /// connecting (and `mercury check` the same way): the secrets, and for SSH the
    /// known_hosts file (or, when trust-on-first-use is to create it, its directory).
    pub fn check_files(&self) -> Result<(), ConfigError> {
        self.check_secret_modes()?;
        if self.transport == super::TransportKind::Ssh {
            if let Some(path) = &self.known_hosts {
                trust::check_file_or_creatable(path, Role::KnownHosts)?;
            }
        }
        Ok(())
    }
}

/// Refuses a secret that is not the running user's or root's, that group or others can
/// read or write, or that sits below a directory others can change (OpenSSH's rules for
/// private keys, with StrictModes for the directories).
pub fn check_secret_mode(path: &Path) -> Result<(), ConfigError> {
    trust::check_file(path, Role::Secret)
}

/// Refuses a configuration file that group or others can write, that someone other than
/// root or the running user owns, or that sits below a directory others can change: they
/// could add devices or lift policy.
pub fn check_config_mode(path: &Path) -> Result<(), ConfigError> {
    trust::check_file(path, Role::Config)
}
