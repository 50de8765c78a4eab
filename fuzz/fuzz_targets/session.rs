//! The prompt matcher and the CLI session, driven by a fuzzed device: every line Mercury
//! sends is answered with the next piece of the input, delivered in small reads. Whatever
//! the device says, the session must not panic and must end (it gets a timeout when the
//! device has nothing more to say). Every catalog platform's prompt patterns are also
//! matched against the raw text.
#![no_main]

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use mercury::catalog::{Catalog, Kind};
use mercury::session::plan::Plan;
use mercury::session::{self, Settings};
use mercury::transport::{Chunk, Connection, Shell, TransportError};

struct Fuzzed {
    replies: VecDeque<Vec<u8>>,
    pending: VecDeque<u8>,
    read: usize,
}

impl Shell for Fuzzed {
    fn send(&mut self, _data: &[u8]) -> Result<(), TransportError> {
        if let Some(r) = self.replies.pop_front() {
            self.pending.extend(r);
        }
        Ok(())
    }
    fn recv(&mut self, _deadline: Instant) -> Result<Chunk, TransportError> {
        if self.pending.is_empty() {
            return match self.replies.is_empty() {
                true => Ok(Chunk::Eof),
                false => Err(TransportError::Timeout {
                    awaited: "output".into(),
                    waited: Duration::ZERO,
                }),
            };
        }
        let n = self.read.min(self.pending.len());
        Ok(Chunk::Data(self.pending.drain(..n).collect()))
    }
    fn close(&mut self, _deadline: Instant) {}
}

/// Parsed once: building the catalog (TOML, regexes) costs far more than one session.
static CATALOG: OnceLock<Option<Catalog>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Some(catalog) = CATALOG.get_or_init(|| Catalog::builtin().ok()) else {
        return;
    };
    let Ok(platforms) = catalog.platforms() else {
        return;
    };
    let cli: Vec<_> = platforms
        .into_iter()
        .filter(|p| matches!(p.kind, Kind::Cli))
        .collect();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let platform = cli[usize::from(pick) % cli.len()];
    let text = String::from_utf8_lossy(rest);
    for m in &platform.modes {
        let _ = m.prompt.matches(&text);
    }
    // Pieces separated by 0xff bytes: the banner, then one reply per line sent.
    let mut replies: VecDeque<Vec<u8>> = rest.split(|b| *b == 0xff).map(<[u8]>::to_vec).collect();
    let banner = replies.pop_front().unwrap_or_default();
    let shell = Fuzzed {
        replies,
        pending: banner.into(),
        read: 1 + usize::from(pick >> 5),
    };
    let plan = Plan::cli(&["interface Gi1/0/5", "switchport access vlan 120"]);
    let settings = Settings {
        device: "leaf1".into(),
        command_timeout: Duration::from_secs(5),
        deadline: Instant::now() + Duration::from_secs(5),
        enable_secret: Some("s3cret".into()),
        secrets: vec![],
        save: pick & 1 == 0,
    };
    let _ = session::run(
        Connection::Shell(Box::new(shell)),
        platform,
        &plan,
        &settings,
    );
});
