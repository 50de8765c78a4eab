//! TLS material and settings shared by the two places Mercury speaks TLS: the JSON-RPC
//! front (`serve-jsonrpc --tls-cert`, a rustls server) and the etcd lock client (a rustls
//! client through `ureq`). One crypto provider (rustls with `ring`), one PEM reader, one
//! rule for private keys: a key file is a secret, mode-checked like every other secret
//! (`config::check_secret_mode`) before it is read, and its bytes never reach a message.
//!
//! This module loads and checks; it opens no socket and knows nothing of HTTP.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

use crate::config::{check_secret_mode, ConfigError};

/// TLS material could not be used (a configuration error, exit 78).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Unreadable file.
    #[error("cannot read {what} {path}: {source}")]
    Read {
        /// Which file (`certificate`, `private key`, `CA`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A private key readable by group or others, or otherwise untrusted.
    #[error(transparent)]
    Mode(#[from] ConfigError),
    /// No usable PEM block of the expected kind.
    #[error("{path}: {problem}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong (never the file's content).
        problem: String,
    },
    /// rustls refused the combination (key does not match the certificate, a CA that is
    /// not a CA, ...).
    #[error("TLS settings: {0}")]
    Rustls(String),
}

/// The crypto provider every TLS endpoint uses: rustls's `ring` backend (pure Rust and
/// assembly; no C toolchain, cmake or Go needed to build, unlike aws-lc).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The lowest TLS version a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MinVersion {
    /// TLS 1.3 only (the default, as Ironic's own JSON-RPC server).
    #[default]
    Tls13,
    /// TLS 1.2 and 1.3, for clients whose TLS library predates 1.3.
    Tls12,
}

/// What a TLS server needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// PEM certificate chain (the server's certificate first).
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1); a secret.
    pub key: PathBuf,
    /// PEM CA certificates: when set, a client must present a certificate they signed.
    pub client_ca: Option<PathBuf>,
    /// The lowest version accepted.
    pub min_version: MinVersion,
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        what,
        path: path.to_path_buf(),
        source,
    })
}

/// Every certificate in a PEM file (at least one).
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read("certificate", path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Pem {
            path: path.to_path_buf(),
            problem: format!("unreadable PEM certificate ({e})"),
        })?;
    if certs.is_empty() {
        return Err(TlsError::Pem {
            path: path.to_path_buf(),
            problem: "no PEM certificate (-----BEGIN CERTIFICATE-----) in the file".into(),
        });
    }
    Ok(certs)
}

/// The private key of a PEM file, after the secret-file mode check.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    Ok(read_key(path)?.0)
}

/// The private key of a PEM file, after the secret-file mode check: parsed, and the file's
/// PEM text for libraries that take PEM (`ureq`).
pub fn read_key(path: &Path) -> Result<(PrivateKeyDer<'static>, Vec<u8>), TlsError> {
    check_secret_mode(path)?;
    let bytes = read("private key", path)?;
    let key = PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| TlsError::Pem {
        path: path.to_path_buf(),
        problem: match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "no PEM private key (-----BEGIN PRIVATE KEY-----) in the file".into()
            }
            // The error of the PEM parser never carries the key's bytes.
            other => format!("unreadable PEM private key ({other})"),
        },
    })?;
    Ok((key, bytes))
}

/// A root store of the CA certificates in a PEM file.
pub fn load_roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in load_certs(path)? {
        roots.add(cert).map_err(|e| TlsError::Pem {
            path: path.to_path_buf(),
            problem: format!("not a usable CA certificate ({e})"),
        })?;
    }
    Ok(roots)
}

/// A rustls server configuration: the certificate and key, the version floor, HTTP/1.1 as
/// the only ALPN protocol, and client-certificate verification when a CA is given.
pub fn server_config(s: &ServerSettings) -> Result<Arc<ServerConfig>, TlsError> {
    let certs = load_certs(&s.cert)?;
    let key = load_key(&s.key)?;
    let provider = provider();
    let versions: &[&rustls::SupportedProtocolVersion] = match s.min_version {
        MinVersion::Tls13 => &[&rustls::version::TLS13],
        MinVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    let builder = match &s.client_ca {
        Some(ca) => {
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(load_roots(ca)?), provider)
                    .build()
                    .map_err(|e| TlsError::Rustls(format!("client CA {}: {e}", ca.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        TlsError::Rustls(format!(
            "{} with {}: {e}",
            s.cert.display(),
            s.key.display()
        ))
    })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_empty_files_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not pem\n").unwrap();
        let e = load_certs(&empty).unwrap_err().to_string();
        assert!(e.contains("no PEM certificate"), "{e}");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = load_key(&empty).unwrap_err().to_string();
        assert!(e.contains("no PEM private key"), "{e}");
        std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_key(&empty).unwrap_err().to_string();
        assert!(
            e.contains("unsafe permissions") || e.contains("0644"),
            "{e}"
        );
        let e = load_certs(&dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read certificate"), "{e}");
    }
}
