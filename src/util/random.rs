//! Random bytes from the kernel for identifiers that must not collide or be guessed in
//! advance (request ids, spool entry names, the markers of a joined exec script) — not for
//! keys. Where `/dev/urandom` cannot be read, the clock and the process id stand in.

use std::io::Read;

/// `N` random bytes.
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut out));
    if read.is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let seed = (t ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
        for (b, s) in out.iter_mut().zip(seed.iter().cycle()) {
            *b = *s;
        }
    }
    out
}

/// `N` random bytes as `2N` lower-case hex digits.
pub fn hex<const N: usize>() -> String {
    bytes::<N>().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_has_two_digits_a_byte_and_differs_run_to_run() {
        let a = super::hex::<16>();
        assert_eq!(a.len(), 32);
        assert!(a
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(a, super::hex::<16>());
    }
}
