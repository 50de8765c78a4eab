//! Per-device lock files: at most `max_sessions` Mercury sessions per device on this host.
//!
//! Each slot is a file `<lock_dir>/<device>.lock` (slot 0) or `<device>.<n>.lock`, held with
//! `flock(2)` (through `std::fs::File::try_lock`, the same call `fd-lock` makes), so a killed
//! process never leaves a stale lock: the kernel drops it with the file descriptor. The
//! holder writes its pid, request id, operation and start time into the file for diagnosis;
//! a waiter that gives up reports them. Waiting is bounded (exit 75) and blocked in the
//! kernel (`flock(LOCK_EX)` in a helper thread per slot, [`wait_for_slots`]): a waiter
//! wakes when the slot comes free and once a second for its progress notice, never to poll.
//!
//! The lock directory is trust-checked before use (`config::trust`: owned by root or the
//! running user, no group/other write access, the same for the directories above it) and
//! lock files are opened with `O_NOFOLLOW | O_CLOEXEC`: a symbolic link planted under a lock
//! file's name is refused (exit 78), never followed and truncated.
//!
//! With `[lock] backend = "etcd"` ([`etcd`]), a process first takes a slot here (which
//! serialises the processes of this host and is what request coalescing waits on), then a
//! slot of the same device in etcd, shared by every executor host.

pub mod etcd;
pub mod spool;

use std::fs::{self, File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::config::trust::{self, OpenError, Role};
use crate::config::ConfigError;

/// A lock failure.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Every slot stayed busy until the timeout (exit 75).
    #[error("device {device} is busy: lock not acquired within {:.1}s; held by {holders}", waited.as_secs_f64())]
    Timeout {
        /// The device.
        device: String,
        /// How long we waited.
        waited: Duration,
        /// Who holds the slots, from the lock files.
        holders: String,
    },
    /// The lock directory or file could not be used (exit 78).
    #[error("lock file {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The lock service (etcd) could not be reached or failed (exit 75: retry).
    #[error("lock service: {0}")]
    Backend(String),
    /// The lock service refused our credentials (exit 77).
    #[error("lock service: {0}")]
    Denied(String),
    /// The lock service is misconfigured (credentials file) (exit 78).
    #[error("lock service configuration: {0}")]
    Config(String),
    /// The lock directory or a lock file may not be trusted (exit 78).
    #[error(transparent)]
    Untrusted(ConfigError),
}

/// What a holder writes into its lock file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// The request id.
    pub request_id: String,
    /// The operation.
    pub op: String,
    /// When the lock was taken (RFC 3339).
    pub since: String,
}

impl Holder {
    /// This process, starting `op` for `request_id` now.
    pub fn now(request_id: &str, op: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            request_id: request_id.to_string(),
            op: op.to_string(),
            since: crate::util::now_rfc3339(),
        }
    }
}

/// A held device lock; dropping it releases the slot.
#[derive(Debug)]
pub struct DeviceLock {
    file: File,
    /// Which slot.
    pub slot: u32,
    /// The lock file.
    pub path: PathBuf,
}

impl Drop for DeviceLock {
    fn drop(&mut self) {
        // Clear the holder info; the flock itself goes with the descriptor.
        let _ = self.file.set_len(0);
    }
}

/// A device lock held through the configured backend: the host's slot, plus the etcd slot
/// when `backend = "etcd"`. Dropping it releases both.
#[derive(Debug)]
pub struct Held {
    /// This host's slot.
    pub local: DeviceLock,
    /// The cluster-wide slot (etcd backend).
    pub remote: Option<etcd::RemoteLock>,
}

impl Held {
    /// The cluster-wide slot may have been lost (lease expired): do not start more work.
    pub fn lost(&self) -> bool {
        self.remote.as_ref().is_some_and(etcd::RemoteLock::lost)
    }
}

/// Completes a host slot with the backend's cluster-wide slot, waiting until `deadline`.
pub fn complete(
    settings: &crate::config::LockSettings,
    local: DeviceLock,
    device: &str,
    slots: u32,
    holder: &Holder,
    deadline: Instant,
) -> Result<Held, LockError> {
    let remote = match settings {
        crate::config::LockSettings::File => None,
        crate::config::LockSettings::Etcd(e) => {
            Some(etcd::acquire(e, device, slots, holder, deadline)?)
        }
    };
    Ok(Held { local, remote })
}

/// The lock file of one slot.
pub fn slot_path(dir: &Path, device: &str, slot: u32) -> PathBuf {
    if slot == 0 {
        dir.join(format!("{device}.lock"))
    } else {
        dir.join(format!("{device}.{slot}.lock"))
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LockError + '_ {
    move |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates the lock directory (mode 0750) when missing and checks that it may be trusted.
fn ensure_dir(dir: &Path) -> Result<(), LockError> {
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o750)
            .create(dir)
            .map_err(io(dir))?;
    }
    check_dir(dir)
}

/// The trust check of an existing lock directory, as a run makes it (`mercury check` too).
pub fn check_dir(dir: &Path) -> Result<(), LockError> {
    trust::check_create_dir(dir, Role::LockDir).map_err(LockError::Untrusted)
}

/// What `mercury check` can know offline about the lock directory: a run could create it
/// (or it is trusted), and the running user can write it and the slot files that exist.
pub fn check_usable(dir: &Path, devices: &[(&str, u32)]) -> Vec<String> {
    let mut problems = Vec::new();
    let exists = dir.exists();
    let checked = if exists {
        check_dir(dir).map_err(|e| e.to_string())
    } else {
        trust::check_would_create(dir, Role::LockDir)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    if let Err(e) = checked {
        problems.push(format!("lock_dir: {e}"));
        return problems;
    }
    if let Err(e) = trust::writable(dir) {
        problems.push(format!(
            "lock_dir: {} is not writable by the running user (uid {}): {e}",
            dir.display(),
            trust::running_uid()
        ));
        return problems;
    }
    if exists {
        for (device, slots) in devices {
            for slot in 0..(*slots).max(1) {
                let path = slot_path(dir, device, slot);
                let Ok(meta) = fs::symlink_metadata(&path) else {
                    continue;
                };
                // What opening it would find: a link, a stranger's file, one others can
                // write, or one this user cannot write.
                let verdict = if meta.file_type().is_symlink() {
                    Err(format!(
                        "{}: is a symbolic link, which Mercury never follows here",
                        path.display()
                    ))
                } else {
                    trust::check_file(&path, Role::LockDir)
                        .map_err(|e| e.to_string())
                        .and_then(|()| {
                            trust::writable(&path)
                                .map_err(|e| format!("{}: not writable: {e}", path.display()))
                        })
                };
                if let Err(e) = verdict {
                    problems.push(format!("lock_dir: {e}"));
                }
            }
        }
    }
    problems
}

/// One pass over the slots of `device`: a free slot, or `None` when every slot is held.
/// Never waits.
pub fn try_acquire(
    dir: &Path,
    device: &str,
    slots: u32,
    holder: &Holder,
) -> Result<Option<DeviceLock>, LockError> {
    ensure_dir(dir)?;
    for slot in 0..slots.max(1) {
        let (path, file) = open_slot(dir, device, slot)?;
        match file.try_lock() {
            Ok(()) => return take(file, slot, path, holder).map(Some),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(io(&path)(e)),
        }
    }
    Ok(None)
}

/// Takes a free slot for `device`, waiting up to `timeout`. `device` must already be a
/// validated simple name (it becomes a file name).
pub fn acquire(
    dir: &Path,
    device: &str,
    slots: u32,
    timeout: Duration,
    holder: &Holder,
) -> Result<DeviceLock, LockError> {
    acquire_watched(dir, device, slots, timeout, holder, &mut |_| {})
}

/// [`acquire`], calling `waiting` with the time waited so far about once a second while
/// it waits (for progress shown to a person).
///
/// A busy device costs the waiter nothing while it waits: one thread per slot blocks in
/// `flock(LOCK_EX)` ([`wait_for_slots`]), which the kernel wakes when the slot comes free,
/// and this thread sleeps on their channel, waking once a second for `waiting` and at the
/// timeout. No polling.
pub fn acquire_watched(
    dir: &Path,
    device: &str,
    slots: u32,
    timeout: Duration,
    holder: &Holder,
    waiting: &mut dyn FnMut(Duration),
) -> Result<DeviceLock, LockError> {
    let started = Instant::now();
    if let Some(lock) = try_acquire(dir, device, slots, holder)? {
        return Ok(lock);
    }
    let (tx, rx) = mpsc::channel();
    wait_for_slots(dir, device, slots, holder, &tx, |r| r)?;
    drop(tx);
    loop {
        let waited = started.elapsed();
        waiting(waited);
        if waited >= timeout {
            return Err(LockError::Timeout {
                device: device.to_string(),
                waited,
                holders: describe_holders(dir, device, slots),
            });
        }
        match rx.recv_timeout((timeout - waited).min(WAKE_EVERY)) {
            Ok(taken) => return taken,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(LockError::Backend(format!(
                    "the threads waiting for the lock of {device} ended without it"
                )))
            }
        }
    }
}

/// How often a blocked waiter wakes (for progress shown to a person, and its timeout).
pub const WAKE_EVERY: Duration = Duration::from_secs(1);

/// Starts one thread per slot of `device`, each blocked in `flock(LOCK_EX)` on the slot's
/// file until the kernel gives it the slot; the thread then writes `holder` into the file
/// and sends the lock through `tx` as `wrap(Ok(lock))` (an error as `wrap(Err(..))`).
///
/// A blocked `flock` cannot be called off: a thread whose waiter has moved on (got another
/// slot, timed out, was answered through the spool) keeps waiting, and when it gets the
/// slot, finds nobody receiving and releases it at once (the lock is dropped with the
/// message). In a one-shot process the threads end with it.
pub fn wait_for_slots<T: Send + 'static>(
    dir: &Path,
    device: &str,
    slots: u32,
    holder: &Holder,
    tx: &mpsc::Sender<T>,
    wrap: fn(Result<DeviceLock, LockError>) -> T,
) -> Result<(), LockError> {
    ensure_dir(dir)?;
    for slot in 0..slots.max(1) {
        let (path, file) = open_slot(dir, device, slot)?;
        let tx = tx.clone();
        let holder = holder.clone();
        let at = path.clone();
        thread::Builder::new()
            .name(format!("lock-wait-{slot}"))
            .stack_size(64 * 1024)
            .spawn(move || {
                let taken = blocking_lock(&file)
                    .map_err(io(&path))
                    .and_then(|()| take(file, slot, path, &holder));
                let _ = tx.send(wrap(taken));
            })
            .map_err(io(&at))?;
    }
    Ok(())
}

/// Opens slot `slot` of `device`'s lock files (created when missing; never through a
/// symlink, and only in a lock directory Mercury trusts).
fn open_slot(dir: &Path, device: &str, slot: u32) -> Result<(PathBuf, File), LockError> {
    let path = slot_path(dir, device, slot);
    let file = trust::open_nofollow(&path, Role::LockDir, false, 0o640).map_err(|e| match e {
        OpenError::Untrusted(c) => LockError::Untrusted(c),
        OpenError::Io(source) => io(&path)(source),
    })?;
    Ok((path, file))
}

/// `flock(LOCK_EX)`, blocking; a signal that interrupts the wait (EINTR) does not end it.
fn blocking_lock(file: &File) -> std::io::Result<()> {
    loop {
        match file.lock() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// A slot whose flock is ours: the holder info written, the lock returned.
fn take(
    mut file: File,
    slot: u32,
    path: PathBuf,
    holder: &Holder,
) -> Result<DeviceLock, LockError> {
    let info = serde_json::to_string(holder).unwrap_or_default();
    file.set_len(0).map_err(io(&path))?;
    file.seek(SeekFrom::Start(0)).map_err(io(&path))?;
    file.write_all(format!("{info}\n").as_bytes())
        .map_err(io(&path))?;
    Ok(DeviceLock { file, slot, path })
}

/// Opens a lock file for reading without following a link.
fn open_read_nofollow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
}

/// Reads the holder info of every slot, for a message.
pub fn describe_holders(dir: &Path, device: &str, slots: u32) -> String {
    let mut parts = Vec::new();
    for slot in 0..slots.max(1) {
        let mut text = String::new();
        let ok = open_read_nofollow(&slot_path(dir, device, slot))
            .and_then(|mut f| f.read_to_string(&mut text))
            .is_ok();
        match serde_json::from_str::<Holder>(text.trim()) {
            Ok(h) if ok => parts.push(format!(
                "pid {} (request {}, {} since {})",
                h.pid, h.request_id, h.op, h.since
            )),
            _ => parts.push("an unknown holder".to_string()),
        }
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(id: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            request_id: id.into(),
            op: "attach_port".into(),
            since: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn slots_then_timeout_names_holders() {
        let dir = tempfile::tempdir().unwrap();
        let a = acquire(dir.path(), "leaf", 2, Duration::from_secs(1), &holder("r1")).unwrap();
        let b = acquire(dir.path(), "leaf", 2, Duration::from_secs(1), &holder("r2")).unwrap();
        assert_ne!(a.slot, b.slot);
        let e = acquire(
            dir.path(),
            "leaf",
            2,
            Duration::from_millis(100),
            &holder("r3"),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("request r1") && msg.contains("request r2"),
            "{msg}"
        );
        drop(a);
        let c = acquire(
            dir.path(),
            "leaf",
            2,
            Duration::from_millis(100),
            &holder("r4"),
        )
        .unwrap();
        assert_eq!(c.slot, 0);
    }
}
