//! Fault injection, chosen by `--fault SPEC` (repeatable) or `MERCURY_SIM_FAULTS`
//! (comma-separated). Parsing only; the session loop and the platforms act on it.

/// The faults in force for one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// Delay before every response, in milliseconds.
    pub slow_ms: u64,
    /// Exit abruptly (no prompt, status 255) after answering this many lines.
    pub drop_after: Option<u64>,
    /// Stop answering (keep reading, never prompt again) after this many lines.
    pub hang_after: Option<u64>,
    /// The configuration database is locked by another user.
    pub db_locked: bool,
    /// Lines containing any of these get the platform's error marker.
    pub reject: Vec<String>,
    /// Commit / apply (or save, where there is no commit) fails.
    pub commit_fail: bool,
    /// Refuse a session that would exceed this many concurrent sessions.
    pub max_sessions: Option<u32>,
    /// Print the banner but never a prompt.
    pub no_prompt_after_login: bool,
}

impl Faults {
    /// Add one spec; returns an error message for an unknown or malformed spec.
    pub fn add(&mut self, spec: &str) -> Result<(), String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Ok(());
        }
        let (k, v) = match spec.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (spec, None),
        };
        let num = |v: Option<&str>| -> Result<u64, String> {
            v.and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("fault {k} needs a number: {spec}"))
        };
        match k {
            "slow" => self.slow_ms = num(v)?,
            "drop-after" => self.drop_after = Some(num(v)?),
            "hang-after" => self.hang_after = Some(num(v)?),
            "max-sessions" => self.max_sessions = Some(num(v)? as u32),
            "db-locked" => self.db_locked = true,
            "commit-fail" => self.commit_fail = true,
            "no-prompt-after-login" => self.no_prompt_after_login = true,
            "reject" => match v {
                Some(t) if !t.is_empty() => self.reject.push(t.to_string()),
                _ => return Err(format!("fault reject needs text: {spec}")),
            },
            _ => return Err(format!("unknown fault: {spec}")),
        }
        Ok(())
    }

    /// Whether `line` is to be rejected.
    pub fn rejects(&self, line: &str) -> bool {
        self.reject.iter().any(|t| line.contains(t.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_fault() {
        let mut f = Faults::default();
        for s in [
            "slow=5",
            "drop-after=3",
            "hang-after=2",
            "db-locked",
            "reject=vlan 99",
            "commit-fail",
            "max-sessions=1",
            "no-prompt-after-login",
        ] {
            assert_eq!(f.add(s), Ok(()));
        }
        assert_eq!(f.slow_ms, 5);
        assert!(f.rejects("switchport access vlan 99"));
        assert!(f.add("bogus").is_err());
        assert!(f.add("slow=x").is_err());
    }
}
