//! Base64 (RFC 4648 §4, standard alphabet) for the whole crate: OpenSSH known_hosts keys
//! and fingerprints, etcd's JSON encoding of bytes, HTTP Basic credentials. One engine,
//! from the `base64` crate; decoding accepts input with or without `=` padding.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::{alphabet, Engine};

const ENGINE: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Encodes with `=` padding.
pub fn encode(data: &[u8]) -> String {
    ENGINE.encode(data)
}

/// Decodes, padded or not; `None` for anything that is not base64.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    ENGINE.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4648_vectors_padded_and_unpadded() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("/m/leaf/0", "L20vbGVhZi8w"),
        ] {
            assert_eq!(encode(plain.as_bytes()), enc);
            assert_eq!(decode(enc).unwrap(), plain.as_bytes());
            assert_eq!(decode(enc.trim_end_matches('=')).unwrap(), plain.as_bytes());
        }
        assert_eq!(decode("Zm9v!"), None);
        assert_eq!(decode("Z"), None);
        assert_eq!(decode("a$b"), None);
    }
}
