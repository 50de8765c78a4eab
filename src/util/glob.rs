//! Shell-style wildcards (`*` any run, `?` one character, everything else literal, whole
//! string): port allow/deny patterns in policy, host patterns in known_hosts.

/// Shell-style glob: `*` any run, `?` one character; everything else literal, whole-string.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("Ethernet1/*", "Ethernet1/48"));
        assert!(glob("Eth?/1", "Eth1/1"));
        assert!(!glob("Eth?/1", "Eth10/1"));
        assert!(glob("*", ""));
        assert!(!glob("Ethernet1/4", "Ethernet1/48"));
        assert!(glob("a*b*c", "axxbyyc"));
    }
}
