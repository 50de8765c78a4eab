//! Near-miss suggestions ("did you mean leaf-1?") for names a person typed: devices,
//! platforms, callers, configuration keys.

/// Edit distance (insertions, deletions, substitutions, and swaps of two neighbours) between
/// `a` and `b`, case-insensitively.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The candidate closest to `typed`, when it is close enough to be a typo: at most one edit
/// for short names, a third of the length for longer ones. Ties go to the first candidate.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (typed.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != typed)
        .map(|c| (distance(typed, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `"; did you mean X?"` for [`closest`], or an empty string.
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(typed, candidates)
        .map(|c| format!("; did you mean {c}?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_caught_and_strangers_are_not() {
        assert_eq!(distance("leaf-l", "leaf-1"), 1);
        assert_eq!(distance("cisoc_ios", "cisco_ios"), 1);
        assert_eq!(
            closest("leaf-l", ["leaf-1", "leaf-2", "spine-1"]),
            Some("leaf-1")
        );
        assert_eq!(
            closest("cisco_isp", ["cisco_ios", "cisco_nxos"]),
            Some("cisco_ios")
        );
        assert_eq!(
            closest("alowed_vlans", ["allowed_vlans", "denied_vlans"]),
            Some("allowed_vlans")
        );
        assert_eq!(closest("juniper", ["cisco_ios"]), None);
        assert_eq!(closest("x", ["leaf-1"]), None);
        assert_eq!(closest("leaf-1", ["leaf-1"]), None);
        assert_eq!(
            did_you_mean("conductr-a", ["conductor-a"]),
            "; did you mean conductor-a?"
        );
        assert_eq!(did_you_mean("zzz", ["conductor-a"]), "");
    }
}
