//! The state file: created on first use with the platform's default inventory,
//! read-modify-written under an exclusive `flock` of the file itself (in place,
//! so every waiter locks the same inode), session counting, and the transcript.
//! Each process keeps the state in memory beside the file's bytes, and parses the file
//! again only when they changed (see [`Store`]).

use crate::model::DeviceState;
use crate::platform::Platform;
use std::cell::{Cell, RefCell};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Errors of the state layer, worded for stderr.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn io_err(path: &Path, what: &str, e: std::io::Error) -> StoreError {
    StoreError(format!("{what} {}: {e}", path.display()))
}

/// Where and how the device state lives.
///
/// A store keeps the state it last read or wrote in memory, with the exact bytes of the
/// file it came from: each [`Store::with`] still locks and reads the file (so a change by
/// any other process — another session, `mercury-sim show`, a test's script rewriting the
/// JSON — is seen by the next line), but parses it only when those bytes changed, and
/// writes it only when the line changed the state. A clone starts with an empty cache.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    platform: Platform,
    hostname: Option<String>,
    vlans: Vec<u16>,
    cache: RefCell<Option<Cached>>,
    parses: Cell<u64>,
    writes: Cell<u64>,
}

/// The state as last read or written, the file's bytes it was read from (or written as),
/// and the copy the next line works on (equal to `state` unless a line changed it).
#[derive(Debug)]
struct Cached {
    bytes: Vec<u8>,
    state: DeviceState,
    work: DeviceState,
}

impl Clone for Store {
    fn clone(&self) -> Store {
        Store::new(self.path.clone(), self.platform, self.hostname.clone()).with_vlans(&self.vlans)
    }
}

impl Store {
    /// A store for `path`; `hostname` (when given) overrides the stored one.
    pub fn new(path: PathBuf, platform: Platform, hostname: Option<String>) -> Store {
        Store {
            path,
            platform,
            hostname,
            vlans: Vec::new(),
            cache: RefCell::new(None),
            parses: Cell::new(0),
            writes: Cell::new(0),
        }
    }

    /// VLANs a new state file starts with (`--vlans`).
    pub fn with_vlans(mut self, vlans: &[u16]) -> Store {
        self.vlans = vlans.to_vec();
        self
    }

    /// How many times this store parsed the state file (it does only when the file's bytes
    /// differ from those it last read or wrote).
    pub fn parses(&self) -> u64 {
        self.parses.get()
    }

    /// How many times this store wrote the state file (only when a line changed the state).
    pub fn writes(&self) -> u64 {
        self.writes.get()
    }

    /// Lock the file, load (or create) the state, run `f`, write back if it
    /// changed, unlock. Everything that touches the state goes through here.
    pub fn with<R>(&self, f: impl FnOnce(&mut DeviceState) -> R) -> Result<R, StoreError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| io_err(&self.path, "cannot open state file", e))?;
        file.lock()
            .map_err(|e| io_err(&self.path, "cannot lock state file", e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| io_err(&self.path, "cannot read state file", e))?;
        let mut cache = self.cache.borrow_mut();
        let mut dirty = false;
        // The state in memory is the file's while the file's bytes are those this store last
        // read or wrote; otherwise (another process, an outside rewrite) the file is parsed.
        let cached = match cache.take() {
            Some(c) if c.bytes == bytes => cache.insert(c),
            _ => {
                let state = if bytes.iter().all(u8::is_ascii_whitespace) {
                    dirty = true;
                    self.platform.shipped_with(&self.vlans)
                } else {
                    self.parses.set(self.parses.get() + 1);
                    first_value(&bytes).map_err(|e| {
                        StoreError(format!(
                            "state file {} is not valid: {e}",
                            self.path.display()
                        ))
                    })?
                };
                cache.insert(Cached {
                    bytes,
                    work: state.clone(),
                    state,
                })
            }
        };
        let work = &mut cached.work;
        if let Some(h) = &self.hostname {
            if &work.hostname != h {
                work.hostname = h.clone();
                dirty = true;
            }
        }
        let r = f(work);
        // Compared with the file's state in place: no copy of the state per line, only
        // when it changed (to keep the new file's state beside the next line's copy).
        if dirty || cached.work != cached.state {
            match write_in_place(&mut file, &self.path, &cached.work) {
                Ok(bytes) => {
                    self.writes.set(self.writes.get() + 1);
                    cached.bytes = bytes;
                    cached.state = cached.work.clone();
                }
                Err(e) => {
                    // Forgotten: the next line reads the file again.
                    *cache = None;
                    return Err(e);
                }
            }
        }
        // Dropping the file releases the lock.
        drop(file);
        Ok(r)
    }

    /// Platform of the stored state, if the file exists and parses. Read under a shared
    /// lock: writers rewrite the file in place, so an unlocked read can see it truncated.
    pub fn peek_platform(path: &Path) -> Option<String> {
        let mut file = File::open(path).ok()?;
        file.lock_shared().ok()?;
        let mut text = String::new();
        file.read_to_string(&mut text).ok()?;
        drop(file);
        let v: serde_json::Value = first_value(text.as_bytes()).ok()?;
        v.get("platform")?.as_str().map(str::to_string)
    }

    /// Register this process as a session. Returns the session id, or the
    /// number of open sessions when `max` would be exceeded.
    pub fn session_start(&self, max: Option<u32>) -> Result<Result<u64, u32>, StoreError> {
        let pid = std::process::id();
        self.with(|st| {
            prune_dead(st);
            let s = &mut st.sessions;
            if let Some(max) = max {
                if s.active >= max {
                    return Err(s.active);
                }
            }
            s.pids.push(pid);
            s.active = s.pids.len() as u32;
            s.total += 1;
            s.max_seen = s.max_seen.max(s.active);
            Ok(s.total)
        })
    }

    /// Unregister this process.
    pub fn session_end(&self) {
        let pid = std::process::id();
        let _ = self.with(|st| {
            st.sessions.pids.retain(|p| *p != pid);
            prune_dead(st);
        });
    }

    /// Load for display (prunes sessions of processes that died without
    /// cleaning up, e.g. on SIGKILL).
    pub fn show(&self) -> Result<DeviceState, StoreError> {
        self.with(|st| {
            prune_dead(st);
            st.clone()
        })
    }
}

fn prune_dead(st: &mut DeviceState) {
    let proc_ok = Path::new("/proc/self").exists();
    if proc_ok {
        st.sessions
            .pids
            .retain(|p| Path::new(&format!("/proc/{p}")).exists());
    }
    st.sessions.active = st.sessions.pids.len() as u32;
}

/// The first JSON value of `text` (a write cut short by a kill may leave stale bytes
/// after it).
fn first_value<T: serde::de::DeserializeOwned>(text: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::Deserializer::from_slice(text)
        .into_iter::<T>()
        .next()
        .unwrap_or_else(|| serde_json::from_slice(text))
}

/// Writes `st` over the file; returns the bytes the file now holds.
fn write_in_place(file: &mut File, path: &Path, st: &DeviceState) -> Result<Vec<u8>, StoreError> {
    let mut text = serde_json::to_string_pretty(st)
        .map_err(|e| StoreError(format!("cannot encode state: {e}")))?;
    text.push('\n');
    // Write over the old state, then cut what is left of it: the file is never empty, so
    // a process killed between the two steps leaves the new state followed by stale bytes
    // (read as the new state: only the first JSON value counts), never a blank file that
    // would read as a factory-fresh device.
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.write_all(text.as_bytes()))
        .and_then(|_| file.set_len(text.len() as u64))
        .and_then(|_| file.flush())
        .map_err(|e| io_err(path, "cannot write state file", e))?;
    Ok(text.into_bytes())
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// RFC 3339 UTC timestamp with milliseconds.
pub fn rfc3339(ms: u128) -> String {
    let secs = (ms / 1000) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        ms % 1000
    )
}

/// The transcript log: one JSON line per received line, appended under a lock.
#[derive(Debug, Clone)]
pub struct Transcript {
    path: Option<PathBuf>,
}

impl Transcript {
    /// A transcript writing to `path` (or nowhere).
    pub fn new(path: Option<PathBuf>) -> Transcript {
        Transcript { path }
    }

    /// Record one received line; `waited`: none of it had arrived when the CLI wanted it
    /// (the device waited for input: one round trip), as against a line typed ahead.
    pub fn record(&self, session: u64, mode: &str, line: &str, waited: bool) {
        let Some(path) = &self.path else { return };
        let ms = now_ms();
        let rec = serde_json::json!({
            "ts": rfc3339(ms),
            "ts_ms": ms as u64,
            "pid": std::process::id(),
            "session": session,
            "mode": mode,
            "line": line,
            "waited": waited,
        });
        let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) else {
            return;
        };
        if f.lock().is_ok() {
            let _ = writeln!(f, "{rec}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer killed between writing the new state and cutting the old one leaves stale
    /// bytes after the new state: read back as the new state, never as a fresh device.
    #[test]
    fn a_write_cut_short_reads_as_the_state_written() {
        let dir = std::env::temp_dir().join(format!("sim-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("leaf.json");
        let _ = std::fs::remove_file(&path);
        let store = Store::new(path.clone(), Platform::CiscoIos, Some("leaf".into()));
        store.with(|st| st.hostname = "leaf-7".into()).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("  \"stale\": true }\n}\n");
        std::fs::write(&path, text).unwrap();
        let store = Store::new(path.clone(), Platform::CiscoIos, None);
        assert_eq!(store.with(|st| st.hostname.clone()).unwrap(), "leaf-7");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn scratch(name: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("sim-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("leaf.json");
        (dir, path)
    }

    fn ios_cli() -> Box<dyn crate::cli::Cli> {
        let env = crate::cli::Env {
            platform: Platform::CiscoIos,
            hostname: "leaf".into(),
            username: "admin".into(),
            enable_secret: None,
            faults: crate::faults::Faults::default(),
            model: None,
            interactive: true,
        };
        Platform::CiscoIos.new_cli(&env)
    }

    /// Lines that change nothing (empty lines, `show`s) neither parse nor write the state
    /// file again; a line that changes it writes it once, and is not parsed back.
    #[test]
    fn lines_that_change_nothing_neither_parse_nor_write() {
        let (dir, path) = scratch("idle");
        let store = Store::new(path.clone(), Platform::CiscoIos, Some("leaf".into()));
        let mut cli = ios_cli();
        let mut run = |line: &str| {
            let mut out = crate::cli::Out::default();
            store.with(|st| cli.handle(line, st, &mut out)).unwrap();
            out.text
        };
        run("enable");
        let (parses, writes) = (store.parses(), store.writes());
        assert_eq!(writes, 1, "the new file is written once");
        for _ in 0..50 {
            run("");
            assert!(run("show vlan brief").contains("default"));
            run("show running-config");
        }
        assert_eq!(
            store.parses(),
            parses,
            "no line re-parsed an unchanged file"
        );
        assert_eq!(store.writes(), writes, "no line rewrote an unchanged state");
        run("configure terminal");
        run("vlan 300");
        run("name blue");
        run("end");
        assert!(run("show vlan brief").contains("blue"));
        assert_eq!(store.parses(), parses, "its own writes are not parsed back");
        assert_eq!(store.writes(), writes + 2, "vlan 300, then its name");
        let on_disk: DeviceState =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(on_disk.running.vlans["300"].name, "blue");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Two stores on one file (two simulator processes): a change made through one is
    /// seen by the other's next line, which parses the file once for it.
    #[test]
    fn a_change_by_another_store_is_seen_on_the_next_line() {
        let (dir, path) = scratch("two");
        let a = Store::new(path.clone(), Platform::CiscoIos, Some("leaf".into()));
        let b = Store::new(path.clone(), Platform::CiscoIos, Some("leaf".into()));
        let vlans = |s: &Store| s.with(|st| st.running.vlans.len()).unwrap();
        let n = vlans(&a);
        assert_eq!(vlans(&b), n);
        assert_eq!(b.parses(), 1);
        b.with(|st| {
            st.running.vlans.insert("300".into(), Default::default());
        })
        .unwrap();
        let parses = a.parses();
        assert_eq!(vlans(&a), n + 1);
        assert_eq!(a.parses(), parses + 1);
        assert_eq!(vlans(&a), n + 1);
        assert_eq!(a.parses(), parses + 1, "parsed once per change");
        a.with(|st| {
            st.running.vlans.remove("300");
        })
        .unwrap();
        assert_eq!(vlans(&b), n);
        // A clone (the signal handler's copy) reads the file for itself.
        let c = a.clone();
        assert_eq!(vlans(&c), n);
        assert_eq!(c.parses(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A state file rewritten by another tool (a test or bench script's JSON rewrite, in
    /// its own formatting, or with every byte count unchanged) is read on the next line.
    #[test]
    fn an_external_rewrite_is_picked_up() {
        let (dir, path) = scratch("outside");
        let store = Store::new(path.clone(), Platform::CiscoIos, Some("leaf".into()));
        store.session_start(None).unwrap().unwrap();
        assert_eq!(store.with(|st| st.sessions.max_seen).unwrap(), 1);
        // Compact JSON, as python's json.dump writes it.
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        v["sessions"]["max_seen"] = 0.into();
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        assert_eq!(store.with(|st| st.sessions.max_seen).unwrap(), 0);
        // The same length, a different state.
        let text = std::fs::read_to_string(&path).unwrap();
        let same_length = text.replace("\"max_seen\":0", "\"max_seen\":7");
        assert_eq!(same_length.len(), text.len());
        std::fs::write(&path, same_length).unwrap();
        assert_eq!(store.with(|st| st.sessions.max_seen).unwrap(), 7);
        // Emptied: a factory-fresh device again.
        std::fs::write(&path, "").unwrap();
        assert_eq!(store.with(|st| st.sessions.total).unwrap(), 0);
        // Broken, then mended: an error, then the mended state.
        std::fs::write(&path, "{ not json").unwrap();
        assert!(store.with(|_| ()).is_err());
        std::fs::write(&path, text).unwrap();
        assert_eq!(store.with(|st| st.sessions.max_seen).unwrap(), 0);
        store.session_end();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rfc3339_formats_epoch_and_leap_day() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
    }
}
