//! OpenSSH host keys: `SHA256:` fingerprints and `known_hosts` files.
//!
//! This module decides whether a presented host key is the one configured for a host. It
//! reads the OpenSSH `known_hosts` format (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"): host
//! patterns with `*`/`?` wildcards and `!` negation, `[host]:port` for ports other than 22,
//! hashed names (`|1|salt|hash`, HMAC-SHA1), and the `@revoked` marker. `@cert-authority`
//! lines are ignored: Mercury does not accept host certificates. Malformed lines are
//! skipped, as OpenSSH does. It never talks to the network. The file's trust (owned by root
//! or the running user, not writable by group or others, nor any directory or link on the
//! way: whoever can write it can impersonate every device it lists) is checked by the
//! config layer with the device's secrets, before a connection is opened.

use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use hmac::{Hmac, Mac};

use crate::util::b64;
use crate::util::glob::glob;
use sha2::{Digest, Sha256};

/// `SHA256:` and the unpadded base64 of the key blob's SHA-256, as `ssh-keygen -l` prints.
pub fn fingerprint(blob: &[u8]) -> String {
    let digest = Sha256::digest(blob);
    let mut b = b64::encode(&digest);
    while b.ends_with('=') {
        b.pop();
    }
    format!("SHA256:{b}")
}

/// The key type named inside a public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, ...).
pub fn key_type(blob: &[u8]) -> Option<&str> {
    let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
    std::str::from_utf8(blob.get(4..4 + len)?).ok()
}

/// How a host is named in known_hosts: `host` on port 22, else `[host]:port`.
pub fn host_name(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// One key known for a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownKey {
    /// Key type (`ssh-ed25519`).
    pub key_type: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Line number in the file.
    pub line: usize,
}

/// The verdict on a presented key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A line for this host has exactly this key.
    Known,
    /// The key is marked `@revoked`.
    Revoked {
        /// Line number of the `@revoked` entry.
        line: usize,
    },
    /// The host is listed with other keys: of the same type (a changed key) or only of
    /// other types.
    Changed {
        /// The keys listed for the host.
        known: Vec<KnownKey>,
    },
    /// The host is not listed at all.
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    None,
    Revoked,
    CertAuthority,
}

#[derive(Debug, Clone)]
struct Entry {
    marker: Marker,
    patterns: String,
    key_type: String,
    blob: Vec<u8>,
    line: usize,
}

/// A parsed known_hosts file.
#[derive(Debug, Clone, Default)]
pub struct KnownHosts {
    entries: Vec<Entry>,
}

impl KnownHosts {
    /// Reads a file (trust-checked with the device's secrets before any connection); a
    /// missing file is an empty list.
    pub fn load(path: &Path) -> Result<KnownHosts, String> {
        match fs::read_to_string(path) {
            Ok(text) => Ok(KnownHosts::parse(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(KnownHosts::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// Parses known_hosts text.
    pub fn parse(text: &str) -> KnownHosts {
        let entries = text
            .lines()
            .enumerate()
            .filter_map(|(i, l)| parse_line(l, i + 1))
            .collect();
        KnownHosts { entries }
    }

    /// Number of usable lines.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no line was usable.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The key types listed for a host (in file order, without duplicates), so the client
    /// can ask the server for a key it can verify.
    pub fn key_types(&self, host: &str, port: u16) -> Vec<String> {
        let name = host_name(host, port);
        let mut out: Vec<String> = Vec::new();
        for e in self.for_host(&name) {
            if e.marker == Marker::None && !out.contains(&e.key_type) {
                out.push(e.key_type.clone());
            }
        }
        out
    }

    /// Checks a presented key blob for `host` on `port`.
    pub fn check(&self, host: &str, port: u16, blob: &[u8]) -> Verdict {
        // A revoked key is refused whatever host it is presented by.
        if let Some(e) = self
            .entries
            .iter()
            .find(|e| e.marker == Marker::Revoked && e.blob == blob)
        {
            return Verdict::Revoked { line: e.line };
        }
        let name = host_name(host, port);
        let mut known = Vec::new();
        for e in self.for_host(&name).filter(|e| e.marker == Marker::None) {
            if e.blob == blob {
                return Verdict::Known;
            }
            known.push(KnownKey {
                key_type: e.key_type.clone(),
                fingerprint: fingerprint(&e.blob),
                line: e.line,
            });
        }
        if known.is_empty() {
            Verdict::Unknown
        } else {
            Verdict::Changed { known }
        }
    }

    fn for_host<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries
            .iter()
            .filter(move |e| e.marker != Marker::CertAuthority && host_matches(&e.patterns, name))
    }
}

fn parse_line(line: &str, number: usize) -> Option<Entry> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let mut fields = line.split_whitespace();
    let mut first = fields.next()?;
    let marker = match first {
        "@revoked" => Marker::Revoked,
        "@cert-authority" => Marker::CertAuthority,
        m if m.starts_with('@') => return None,
        _ => Marker::None,
    };
    if marker != Marker::None {
        first = fields.next()?;
    }
    let key_type = fields.next()?;
    let blob = b64::decode(fields.next()?)?;
    // The blob names its own type; a line whose two disagree is malformed.
    if key_type_of(&blob)? != key_type {
        return None;
    }
    Some(Entry {
        marker,
        patterns: first.to_string(),
        key_type: key_type.to_string(),
        blob,
        line: number,
    })
}

fn key_type_of(blob: &[u8]) -> Option<&str> {
    key_type(blob)
}

/// OpenSSH's rule for a comma-separated pattern list: a match of a negated pattern rejects
/// the line, else any positive match accepts it.
fn host_matches(patterns: &str, name: &str) -> bool {
    let mut matched = false;
    for p in patterns.split(',') {
        if let Some(hashed) = p.strip_prefix("|1|") {
            if hashed_matches(hashed, name) {
                matched = true;
            }
        } else if let Some(neg) = p.strip_prefix('!') {
            if glob(&neg.to_ascii_lowercase(), name) {
                return false;
            }
        } else if glob(&p.to_ascii_lowercase(), name) {
            matched = true;
        }
    }
    matched
}

/// `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`.
fn hashed_matches(hashed: &str, name: &str) -> bool {
    let Some((salt, hash)) = hashed.split_once('|') else {
        return false;
    };
    let (Some(salt), Some(hash)) = (b64::decode(salt), b64::decode(hash)) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<sha1::Sha1>::new_from_slice(&salt) else {
        return false;
    };
    mac.update(name.as_bytes());
    mac.verify_slice(&hash).is_ok()
}

/// Adds `host`'s key to the file (created 0644 if missing) unless a line for the host
/// appeared meanwhile, under an exclusive lock of the file so that concurrent Mercury runs
/// for devices sharing the file neither interleave nor duplicate lines. Returns what the
/// file says after the write: [`Verdict::Known`] when this key is (now) there.
pub fn learn(
    path: &Path,
    host: &str,
    port: u16,
    blob: &[u8],
    comment: &str,
) -> Result<Verdict, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |what: &str, e: std::io::Error| format!("{what} {}: {e}", path.display());
    let mut file = fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| fail("cannot open", e))?;
    file.lock().map_err(|e| fail("cannot lock", e))?;
    let text = fs::read_to_string(path).map_err(|e| fail("cannot read", e))?;
    let current = KnownHosts::parse(&text).check(host, port, blob);
    if current != Verdict::Unknown {
        return Ok(current);
    }
    let key_type =
        key_type(blob).ok_or_else(|| "the host key blob names no key type".to_string())?;
    let mut line = String::new();
    if !text.is_empty() && !text.ends_with('\n') {
        line.push('\n');
    }
    line.push_str(&format!(
        "{} {key_type} {} {comment}\n",
        host_name(host, port),
        b64::encode(blob)
    ));
    file.seek(SeekFrom::End(0))
        .and_then(|_| file.write_all(line.as_bytes()))
        .and_then(|_| file.sync_all())
        .map_err(|e| fail("cannot write", e))?;
    Ok(Verdict::Known)
}

#[cfg(test)]
mod tests {
    use super::*;

    // An ed25519 public key and its fingerprint as `ssh-keygen -lf` prints them.
    const ED: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIOfLYIbUQdQqKjEWacZ8XviC5j+OCkBO4Ubs1GxVAtFS";
    const ED_FP: &str = "SHA256:BVxl72jCAdocpUhiumAXcRl5g6y858UL9mVJqExf/V4";
    const ED2: &str = "AAAAC3NzaC1lZDI1NTE5AAAAINJy36guZHzlKy8bbDWTzWPPbKEAFUTfyEZKY1hUlduT";

    fn blob(text: &str) -> Vec<u8> {
        b64::decode(text).unwrap()
    }

    #[test]
    fn key_type_and_fingerprint() {
        let b = blob(ED);
        assert_eq!(key_type(&b), Some("ssh-ed25519"));
        assert_eq!(fingerprint(&b), ED_FP);
        assert_eq!(key_type(&[0, 0]), None);
    }

    #[test]
    fn plain_port_wildcard_and_negation() {
        let kh = KnownHosts::parse(&format!(
            "# comment\n\n\
             leaf1,192.0.2.1 ssh-ed25519 {ED}\n\
             [leaf2]:2222 ssh-ed25519 {ED}\n\
             *.dc1,!bad.dc1 ssh-ed25519 {ED} some comment\n\
             garbage line\n\
             @cert-authority * ssh-ed25519 {ED2}\n"
        ));
        assert_eq!(kh.len(), 4);
        let b = blob(ED);
        assert_eq!(kh.check("leaf1", 22, &b), Verdict::Known);
        assert_eq!(kh.check("LEAF1", 22, &b), Verdict::Known);
        assert_eq!(kh.check("192.0.2.1", 22, &b), Verdict::Known);
        // A port other than 22 needs the [host]:port form.
        assert_eq!(kh.check("leaf1", 2222, &b), Verdict::Unknown);
        assert_eq!(kh.check("leaf2", 2222, &b), Verdict::Known);
        assert_eq!(kh.check("leaf2", 22, &b), Verdict::Unknown);
        assert_eq!(kh.check("sw.dc1", 22, &b), Verdict::Known);
        assert_eq!(kh.check("bad.dc1", 22, &b), Verdict::Unknown);
        // The CA line is never taken as a host key.
        assert_eq!(kh.check("other", 22, &blob(ED2)), Verdict::Unknown);
    }

    #[test]
    fn changed_key_lists_the_known_fingerprints() {
        let kh = KnownHosts::parse(&format!("leaf1 ssh-ed25519 {ED}\n"));
        match kh.check("leaf1", 22, &blob(ED2)) {
            Verdict::Changed { known } => {
                assert_eq!(known.len(), 1);
                assert_eq!(known[0].fingerprint, fingerprint(&blob(ED)));
                assert_eq!(known[0].line, 1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn revoked_wins() {
        let kh = KnownHosts::parse(&format!(
            "leaf1 ssh-ed25519 {ED}\n@revoked * ssh-ed25519 {ED}\n"
        ));
        assert_eq!(
            kh.check("leaf1", 22, &blob(ED)),
            Verdict::Revoked { line: 2 }
        );
    }

    #[test]
    fn hashed_names_match_with_hmac_sha1() {
        // Built the way ssh-keygen -H does: HMAC-SHA1 keyed with a random salt.
        let salt = [7u8; 20];
        let hash = |name: &str| {
            let mut mac = Hmac::<sha1::Sha1>::new_from_slice(&salt).unwrap();
            mac.update(name.as_bytes());
            b64::encode(&mac.finalize().into_bytes())
        };
        let s = b64::encode(&salt);
        let kh = KnownHosts::parse(&format!(
            "|1|{s}|{} ssh-ed25519 {ED}\n|1|{s}|{} ssh-ed25519 {ED}\n",
            hash("leaf1"),
            hash("[127.0.0.1]:2200")
        ));
        let b = blob(ED);
        assert_eq!(kh.check("leaf1", 22, &b), Verdict::Known);
        assert_eq!(kh.check("127.0.0.1", 2200, &b), Verdict::Known);
        assert_eq!(kh.check("leaf2", 22, &b), Verdict::Unknown);
        assert_eq!(kh.key_types("leaf1", 22), vec!["ssh-ed25519".to_string()]);
    }

    #[test]
    fn mismatched_type_field_is_skipped() {
        let kh = KnownHosts::parse(&format!("leaf1 ssh-rsa {ED}\n"));
        assert!(kh.is_empty());
    }

    #[test]
    fn wildcard_globs() {
        assert!(glob("*", "anything"));
        assert!(glob("leaf?", "leaf1"));
        assert!(!glob("leaf?", "leaf12"));
        assert!(glob("*.dc1", "a.b.dc1"));
        assert!(glob("[10.0.0.*]:22?2", "[10.0.0.5]:2202"));
        assert!(!glob("a*b", "acbd"));
    }

    #[test]
    fn learn_appends_once_and_never_over_a_changed_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        fs::write(&path, "other ssh-ed25519 ".to_string() + ED).unwrap();
        let b = blob(ED);
        assert_eq!(
            learn(&path, "127.0.0.1", 2200, &b, "learned").unwrap(),
            Verdict::Known
        );
        assert_eq!(
            learn(&path, "127.0.0.1", 2200, &b, "learned").unwrap(),
            Verdict::Known
        );
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains("\n[127.0.0.1]:2200 ssh-ed25519 "), "{text}");
        assert!(matches!(
            learn(&path, "127.0.0.1", 2200, &blob(ED2), "x").unwrap(),
            Verdict::Changed { .. }
        ));
    }
}
