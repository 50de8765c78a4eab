//! `proxy_jump`: the SSH jump host a device is reached through.

use crate::request::validate;

/// A `proxy_jump = "[user@]host[:port]"` bastion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpHost {
    /// Login user on the bastion (default: the device's `username`).
    pub user: Option<String>,
    /// Host name or address (IPv6 addresses in `[]` when a port follows).
    pub host: String,
    /// TCP port, default 22.
    pub port: u16,
}

impl JumpHost {
    /// Parses `[user@]host[:port]` (`[v6]:port` for IPv6 with a port).
    pub fn parse(s: &str) -> Result<JumpHost, String> {
        let bad = || format!("{} is not [user@]host[:port]", validate::Escaped(s));
        if s.is_empty()
            || s.chars()
                .any(|c| validate::is_dangerous(c) || c.is_whitespace())
            || s.contains(['/', ','])
        {
            return Err(bad());
        }
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
            Some(_) => return Err(bad()),
            None => (None, s),
        };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(bad)?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(bad)?),
            };
            (h, port)
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        let port = match port {
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?,
            None => 22,
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(JumpHost {
            user,
            host: host.to_string(),
            port,
        })
    }
}
