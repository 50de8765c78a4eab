//! HTTP Basic credentials checked against an Apache-style htpasswd file.
//!
//! Only bcrypt hashes (`$2y$`, `$2b$`, `$2a$`, as `htpasswd -B` writes them) are accepted,
//! as in Ironic's own `BasicAuthMiddleware`; other schemes (MD5 `$apr1$`, SHA1, crypt,
//! plain text) never match. The file is refused when group or others can write it. This
//! module never logs or returns a password or a hash. Every name costs the same: a user
//! that is not in the file is verified against a decoy entry, so the time of a refusal
//! does not tell which names exist.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The htpasswd file could not be used; the connection is refused (configuration error).
#[derive(Debug, thiserror::Error)]
pub enum HtpasswdError {
    /// Unreadable.
    #[error("cannot read htpasswd file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Writable by group or others.
    #[error("htpasswd file {path}: unsafe permissions {mode:04o} (writable by group or others); chmod go-w")]
    UnsafeMode {
        /// The file.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
}

/// Why credentials were not accepted. The messages match Ironic's middleware.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header (401).
    #[error("Authorization required")]
    Missing,
    /// Another scheme than Basic (400).
    #[error("Unsupported authorization type \"{0}\"")]
    Scheme(String),
    /// The token is not base64 of `user:password` (400).
    #[error("Could not decode authorization token")]
    Undecodable,
    /// Unknown user, wrong password, or a hash scheme that is not bcrypt (401).
    #[error("Incorrect username or password")]
    Incorrect,
}

impl AuthError {
    /// The HTTP status for this refusal.
    pub fn status(&self) -> u16 {
        match self {
            AuthError::Missing | AuthError::Incorrect => 401,
            AuthError::Scheme(_) | AuthError::Undecodable => 400,
        }
    }
}

/// The users of an htpasswd file.
#[derive(Clone)]
pub struct Htpasswd {
    entries: Vec<(String, String)>,
    /// bcrypt verifications run so far (how the equal cost of unknown users is tested).
    bcrypt_runs: std::cell::Cell<u32>,
}

impl std::fmt::Debug for Htpasswd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Htpasswd")
            .field("users", &self.entries.len())
            .finish()
    }
}

impl Htpasswd {
    /// Reads and permission-checks the file.
    pub fn load(path: &Path) -> Result<Htpasswd, HtpasswdError> {
        let meta = std::fs::metadata(path).map_err(|source| HtpasswdError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if meta.mode() & 0o022 != 0 {
            return Err(HtpasswdError::UnsafeMode {
                path: path.to_path_buf(),
                mode: meta.mode() & 0o7777,
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| HtpasswdError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Htpasswd::parse(&text))
    }

    /// Parses `user:hash` lines; blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> Htpasswd {
        let entries = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| l.split_once(':'))
            .map(|(u, h)| (u.to_string(), h.trim().to_string()))
            .collect();
        Htpasswd {
            entries,
            bcrypt_runs: std::cell::Cell::new(0),
        }
    }

    /// How many bcrypt verifications [`Htpasswd::check`] has run.
    pub fn bcrypt_runs(&self) -> u32 {
        self.bcrypt_runs.get()
    }

    /// The hash an unknown user's password is verified against: the costliest bcrypt entry,
    /// so that no unknown name answers faster than a known one (a user-enumeration
    /// oracle). With one cost for every entry, as `htpasswd -B` writes, all cost the same.
    fn decoy(&self) -> Option<&str> {
        self.entries
            .iter()
            .map(|(_, h)| h.as_str())
            .filter(|h| is_bcrypt(h))
            .max_by_key(|h| bcrypt_cost(h))
    }

    /// Checks an `Authorization` header value; returns the user name.
    pub fn check(&self, authorization: Option<&str>) -> Result<String, AuthError> {
        let value = authorization.ok_or(AuthError::Missing)?.trim();
        let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
        if !scheme.eq_ignore_ascii_case("basic") {
            return Err(AuthError::Scheme(crate::request::validate::printable(
                scheme,
            )));
        }
        let decoded = crate::util::b64::decode(token.trim()).ok_or(AuthError::Undecodable)?;
        let decoded = String::from_utf8(decoded).map_err(|_| AuthError::Undecodable)?;
        let (user, password) = decoded.split_once(':').ok_or(AuthError::Undecodable)?;
        let known = self
            .entries
            .iter()
            .find(|(u, _)| u == user)
            .map(|(_, h)| h.as_str())
            .filter(|h| is_bcrypt(h));
        // An unknown user, or one whose entry is not bcrypt, still costs one bcrypt
        // verification (against the decoy, result ignored): the answer takes as long.
        let hash = known.or_else(|| self.decoy());
        let matched = hash.is_some_and(|h| {
            self.bcrypt_runs
                .set(self.bcrypt_runs.get().saturating_add(1));
            bcrypt::verify(password, h).unwrap_or(false)
        });
        if matched && known.is_some() {
            Ok(user.to_string())
        } else {
            Err(AuthError::Incorrect)
        }
    }
}

/// The user name an `Authorization: Basic` value claims (printable, for the audit record
/// of a refusal); `None` when it does not decode. The password is never returned.
pub fn claimed_user(authorization: Option<&str>) -> Option<String> {
    let value = authorization?.trim();
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = crate::util::b64::decode(token.trim())?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, _) = decoded.split_once(':')?;
    Some(crate::request::validate::printable(user))
}

fn is_bcrypt(hash: &str) -> bool {
    ["$2y$", "$2b$", "$2a$"].iter().any(|p| hash.starts_with(p))
}

/// The cost field of a bcrypt hash (`$2y$12$...` → 12).
fn bcrypt_cost(hash: &str) -> u32 {
    hash.get(4..6).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(s: &str) -> String {
        format!("Basic {}", crate::util::b64::encode(s.as_bytes()))
    }

    #[test]
    fn bcrypt_users_only() {
        let hash = bcrypt::hash("secret", 4).unwrap();
        let y = hash.replacen("$2b$", "$2y$", 1);
        let file = Htpasswd::parse(&format!(
            "# comment\nironic:{y}\nplain:secret\nmd5:$apr1$abc$def\n"
        ));
        assert_eq!(
            file.check(Some(&basic("ironic:secret"))),
            Ok("ironic".into())
        );
        assert_eq!(
            file.check(Some(&basic("ironic:wrong"))),
            Err(AuthError::Incorrect)
        );
        assert_eq!(
            file.check(Some(&basic("plain:secret"))),
            Err(AuthError::Incorrect)
        );
        assert_eq!(
            file.check(Some(&basic("nobody:secret"))),
            Err(AuthError::Incorrect)
        );
        assert_eq!(file.check(None), Err(AuthError::Missing));
        assert_eq!(
            file.check(Some("Bearer abc")),
            Err(AuthError::Scheme("Bearer".into()))
        );
        assert_eq!(file.check(Some("Basic !!!")), Err(AuthError::Undecodable));
        assert_eq!(AuthError::Scheme("x".into()).status(), 400);
        assert!(!format!("{file:?}").contains("$2"));
    }

    /// Regression (issue 13 item 8): an unknown user was refused before any bcrypt work
    /// (8 ms against 340 ms for a known one), which told a caller which names exist.
    #[test]
    fn an_unknown_user_costs_one_bcrypt_verification_like_a_known_one() {
        let cheap = bcrypt::hash("other", 4).unwrap();
        let dear = bcrypt::hash("secret", 5).unwrap();
        let file = Htpasswd::parse(&format!("cheap:{cheap}\nironic:{dear}\nplain:secret\n"));
        assert_eq!(file.decoy(), Some(dear.as_str()), "the costliest entry");
        assert_eq!(bcrypt_cost(&dear), 5);
        let mut runs = file.bcrypt_runs();
        for (who, ok) in [
            ("ironic:secret", true),
            ("ironic:wrong", false),
            ("nobody:secret", false),
            ("plain:secret", false),
            // The decoy's own password does not log in an unknown name.
            ("nobody2:secret", false),
        ] {
            assert_eq!(file.check(Some(&basic(who))).is_ok(), ok, "{who}");
            assert_eq!(file.bcrypt_runs(), runs + 1, "{who}: one verification");
            runs += 1;
        }
        // Refusals before a user name exists cost nothing, whoever asks.
        let _ = file.check(Some("Basic !!!"));
        let _ = file.check(None);
        assert_eq!(file.bcrypt_runs(), runs);
        assert_eq!(
            claimed_user(Some(&basic("nobody:pw"))),
            Some("nobody".into())
        );
        assert_eq!(claimed_user(Some("Bearer x")), None);
    }
}
