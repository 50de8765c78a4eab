//! File trust, as OpenSSH's StrictModes: which files and directories Mercury may believe.
//!
//! A file Mercury *reads* for configuration (mercury.toml, plugins.d files, known_hosts) or
//! secrets (password, key, passphrase, enable secret, etcd credentials) is trusted only when
//! it, every directory above it, and every symbolic link on the way to it (and the
//! directories holding those links) are owned by root or by the user Mercury runs as, and
//! cannot be written by group or others. A secret must in addition not be readable by them.
//! A directory that others can write is tolerated *above* such a file only when it has the
//! sticky bit (`/tmp`): there nobody can rename or replace an entry they do not own.
//!
//! A directory Mercury *creates files in* (`lock_dir`, the audit log's directory) must not
//! be writable by group or others at all, sticky or not: a stranger who can add names there
//! can plant a symbolic link or a file under the name Mercury is about to open. The files
//! themselves are opened with `O_NOFOLLOW | O_CLOEXEC` ([`open_nofollow`]) and must be
//! regular files owned by a trusted user.
//!
//! Every refusal is a [`ConfigError::Untrusted`] (exit 78) that names the path, what it
//! was trusted for, what is wrong and the command that fixes it. This module never reads
//! a file's contents.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::ConfigError;

/// Symbolic links followed on the way to one file before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// What a checked path is for; names it in messages and sets how strict the check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The configuration file (`mercury.toml`).
    Config,
    /// A catalog extension in `plugins.d`, or the directory itself.
    Plugins,
    /// A secret file: not readable by group or others either.
    Secret,
    /// An OpenSSH known_hosts file.
    KnownHosts,
    /// The lock directory.
    LockDir,
    /// The audit log, or the directory it is created in.
    Audit,
}

impl Role {
    fn what(self) -> &'static str {
        match self {
            Role::Config => "the configuration",
            Role::Plugins => "a catalog file (plugins.d)",
            Role::Secret => "a secret",
            Role::KnownHosts => "host keys (known_hosts)",
            Role::LockDir => "lock files (lock_dir)",
            Role::Audit => "the audit log",
        }
    }
}

/// The effective uid Mercury runs as.
pub fn running_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Owners whose files Mercury believes: root and the running user.
pub fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == running_uid()
}

fn untrusted(path: &Path, role: Role, problem: String, fix: String) -> ConfigError {
    ConfigError::Untrusted {
        path: path.to_path_buf(),
        what: role.what(),
        problem,
        fix,
    }
}

fn read_err(path: &Path) -> impl FnOnce(std::io::Error) -> ConfigError + '_ {
    move |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// The path made absolute against the working directory, without resolving links.
fn absolute(path: &Path) -> Result<PathBuf, ConfigError> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(read_err(path))?;
    Ok(cwd.join(path))
}

/// Checks the owner and mode of one directory. `creates`: Mercury creates files in it, so
/// not even the sticky bit makes group/other write access acceptable.
fn check_dir_meta(
    dir: &Path,
    meta: &fs::Metadata,
    role: Role,
    creates: bool,
) -> Result<(), ConfigError> {
    if !meta.is_dir() {
        return Err(untrusted(
            dir,
            role,
            "not a directory".into(),
            "point the configuration at a directory".into(),
        ));
    }
    if !trusted_owner(meta.uid()) {
        return Err(untrusted(
            dir,
            role,
            format!(
                "unsafe ownership: the directory is owned by uid {}, neither root nor the running user (uid {})",
                meta.uid(),
                running_uid()
            ),
            format!("chown root {}", dir.display()),
        ));
    }
    let mode = meta.mode() & 0o7777;
    let sticky = mode & 0o1000 != 0;
    if mode & 0o022 != 0 && (creates || !sticky) {
        return Err(untrusted(
            dir,
            role,
            format!(
                "unsafe permissions {mode:04o}: group or others can write the directory{}",
                if creates && sticky {
                    " (the sticky bit does not stop them adding names Mercury opens)"
                } else {
                    ""
                }
            ),
            format!("chmod go-w {}", dir.display()),
        ));
    }
    Ok(())
}

/// Checks `dir` (which must exist) and every directory above its real location.
fn check_dir_chain(dir: &Path, role: Role, creates_leaf: bool) -> Result<(), ConfigError> {
    let real = fs::canonicalize(dir).map_err(read_err(dir))?;
    let mut leaf = true;
    for d in real.ancestors() {
        let meta = fs::metadata(d).map_err(read_err(d))?;
        check_dir_meta(d, &meta, role, creates_leaf && leaf)?;
        leaf = false;
    }
    Ok(())
}

/// Follows `path` through its symbolic links, checking the directory chain of every hop,
/// and returns the final (non-link) path with its metadata.
fn walk(path: &Path, role: Role) -> Result<(PathBuf, fs::Metadata), ConfigError> {
    let mut p = absolute(path)?;
    for _ in 0..MAX_LINKS {
        let parent = match p.parent() {
            Some(d) => d.to_path_buf(),
            None => PathBuf::from("/"),
        };
        check_dir_chain(&parent, role, false)?;
        let meta = fs::symlink_metadata(&p).map_err(read_err(&p))?;
        if !meta.file_type().is_symlink() {
            return Ok((p, meta));
        }
        // The link itself sits in a directory just checked; where it points is checked next.
        let target = fs::read_link(&p).map_err(read_err(&p))?;
        p = if target.is_absolute() {
            target
        } else {
            parent.join(target)
        };
        p = lexical(&p);
    }
    Err(untrusted(
        path,
        role,
        "too many levels of symbolic links".into(),
        "point the configuration at the file itself".into(),
    ))
}

/// `a/./b/../c` → `a/c` without touching the file system (the directories are checked
/// through `canonicalize` anyway; this only keeps the next hop's parent meaningful).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Checks the owner and mode of a file that exists at `path` (see [`check_file`]).
fn check_file_meta(path: &Path, meta: &fs::Metadata, role: Role) -> Result<(), ConfigError> {
    if !meta.is_file() {
        return Err(untrusted(
            path,
            role,
            "not a regular file".into(),
            "point the configuration at a regular file".into(),
        ));
    }
    if !trusted_owner(meta.uid()) {
        return Err(untrusted(
            path,
            role,
            format!(
                "unsafe ownership: owned by uid {}, neither root nor the running user (uid {})",
                meta.uid(),
                running_uid()
            ),
            format!(
                "chown it to root or to the user running mercury ({})",
                path.display()
            ),
        ));
    }
    let mode = meta.mode() & 0o7777;
    if role == Role::Secret && mode & 0o077 != 0 {
        return Err(untrusted(
            path,
            role,
            format!("unsafe permissions {mode:04o}: group or others can access a secret"),
            format!("chmod 600 {}", path.display()),
        ));
    }
    if mode & 0o022 != 0 {
        return Err(untrusted(
            path,
            role,
            format!("unsafe permissions {mode:04o}: group or others can change it"),
            format!("chmod go-w {}", path.display()),
        ));
    }
    Ok(())
}

/// Checks a file Mercury reads (config, plugins, secret, known_hosts): the file, the
/// directories above it and every link on the way. A missing file is [`ConfigError::Read`]
/// with `NotFound`.
pub fn check_file(path: &Path, role: Role) -> Result<(), ConfigError> {
    let (real, meta) = walk(path, role).map_err(|e| missing_is_the_file(e, path))?;
    check_file_meta(&real, &meta, role)
}

/// A directory on the way that does not exist means the file does not: say so about the
/// file the configuration names.
fn missing_is_the_file(e: ConfigError, path: &Path) -> ConfigError {
    match e {
        ConfigError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
        other => other,
    }
}

/// Checks a directory Mercury reads files from (`plugins.d`): the same rules as for a file's
/// directories. A missing directory is [`ConfigError::Read`] with `NotFound`.
pub fn check_read_dir(dir: &Path, role: Role) -> Result<(), ConfigError> {
    let (real, _) = walk(dir, role)?;
    check_dir_chain(&real, role, false)
}

/// Checks a directory Mercury creates files in (`lock_dir`, the audit log's directory): no
/// group or other write access on it at all, and the usual rules above it. A missing
/// directory is [`ConfigError::Read`] with `NotFound`.
pub fn check_create_dir(dir: &Path, role: Role) -> Result<(), ConfigError> {
    let (real, _) = walk(dir, role)?;
    check_dir_chain(&real, role, true)
}

/// Checks a file Mercury reads and may create (known_hosts under trust-on-first-use): the
/// file when it exists, else the directory it would be created in.
pub fn check_file_or_creatable(path: &Path, role: Role) -> Result<(), ConfigError> {
    match check_file(path, role) {
        Err(ConfigError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            check_would_create(dir, role).map(|_| ())
        }
        other => other,
    }
}

/// Where a missing directory would be created: checks the nearest existing ancestor as a
/// directory Mercury creates in (it will create the missing part there, mode 0750) and
/// returns it.
pub fn check_would_create(dir: &Path, role: Role) -> Result<PathBuf, ConfigError> {
    let dir = absolute(dir)?;
    let mut cur: &Path = &dir;
    loop {
        match fs::symlink_metadata(cur) {
            Ok(_) => {
                check_create_dir(cur, role)?;
                return Ok(cur.to_path_buf());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match cur.parent() {
                Some(p) => cur = p,
                None => return Err(read_err(&dir)(e)),
            },
            Err(e) => return Err(read_err(cur)(e)),
        }
    }
}

/// Opens (creating if needed, with `mode`) a file Mercury writes in a checked directory:
/// never through a symbolic link (`O_NOFOLLOW`), never inherited by a child (`O_CLOEXEC`),
/// and only if what was opened is a regular file owned by a trusted user that group and
/// others cannot write. `append`: `O_APPEND` (the audit log) instead of read-write (locks).
pub fn open_nofollow(path: &Path, role: Role, append: bool, mode: u32) -> Result<File, OpenError> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    let mut opts = OpenOptions::new();
    if append {
        opts.append(true);
    } else {
        opts.read(true).write(true);
    }
    let file = opts
        .create(true)
        .mode(mode)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                OpenError::Untrusted(untrusted(
                    path,
                    role,
                    "is a symbolic link, which Mercury never follows here".into(),
                    format!("remove the link ({})", path.display()),
                ))
            } else {
                OpenError::Io(e)
            }
        })?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    check_file_meta(path, &meta, role).map_err(OpenError::Untrusted)?;
    Ok(file)
}

/// Why [`open_nofollow`] failed.
#[derive(Debug)]
pub enum OpenError {
    /// The file may not be trusted (a link, not a regular file, a stranger's, writable).
    Untrusted(ConfigError),
    /// The system refused (permissions, disk).
    Io(std::io::Error),
}

/// Whether the running user may write `path` (the kernel's answer with the effective ids,
/// `faccessat(AT_EACCESS)`); for a missing path, whether it may create it in the nearest
/// existing directory.
pub fn writable(path: &Path) -> Result<(), std::io::Error> {
    use rustix::fs::{Access, AtFlags, CWD};
    let mut cur = path.to_path_buf();
    loop {
        match fs::symlink_metadata(&cur) {
            Ok(meta) => {
                let need = if meta.is_dir() && cur != path {
                    Access::WRITE_OK | Access::EXEC_OK
                } else {
                    Access::WRITE_OK
                };
                return rustix::fs::accessat(CWD, &cur, need, AtFlags::EACCESS)
                    .map_err(std::io::Error::from);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match cur.parent() {
                Some(p) if !p.as_os_str().is_empty() => cur = p.to_path_buf(),
                _ => cur = PathBuf::from("."),
            },
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn files_and_their_directories_must_not_be_writable_by_others() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("mercury.toml");
        fs::write(&f, "").unwrap();
        chmod(&f, 0o644);
        check_file(&f, Role::Config).unwrap();
        chmod(&f, 0o664);
        let e = check_file(&f, Role::Config).unwrap_err().to_string();
        assert!(
            e.contains("unsafe permissions 0664") && e.contains("chmod go-w"),
            "{e}"
        );
        chmod(&f, 0o640);
        // A secret: not even readable by group.
        let e = check_file(&f, Role::Secret).unwrap_err().to_string();
        assert!(e.contains("access a secret"), "{e}");
        chmod(&f, 0o600);
        check_file(&f, Role::Secret).unwrap();
        // The directory above: world-writable without the sticky bit is refused.
        chmod(dir.path(), 0o777);
        let e = check_file(&f, Role::Config).unwrap_err().to_string();
        assert!(e.contains("write the directory"), "{e}");
        // With the sticky bit (like /tmp) it may hold a file to read ...
        chmod(dir.path(), 0o1777);
        check_file(&f, Role::Config).unwrap();
        // ... but not be a directory Mercury creates files in.
        let e = check_create_dir(dir.path(), Role::LockDir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sticky bit does not stop them"), "{e}");
        chmod(dir.path(), 0o700);
        check_create_dir(dir.path(), Role::LockDir).unwrap();
    }

    #[test]
    fn links_are_followed_and_every_hop_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let safe = dir.path().join("safe");
        let open = dir.path().join("open");
        fs::create_dir(&safe).unwrap();
        fs::create_dir(&open).unwrap();
        let f = safe.join("real.toml");
        fs::write(&f, "").unwrap();
        chmod(&f, 0o600);
        // A link in a directory others can write: they could point it elsewhere.
        chmod(&open, 0o777);
        let link = open.join("mercury.toml");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let e = check_file(&link, Role::Config).unwrap_err().to_string();
        assert!(e.contains(&open.display().to_string()), "{e}");
        chmod(&open, 0o755);
        check_file(&link, Role::Config).unwrap();
        // The target's directory counts too.
        chmod(&safe, 0o777);
        let e = check_file(&link, Role::Config).unwrap_err().to_string();
        assert!(e.contains(&safe.display().to_string()), "{e}");
        chmod(&safe, 0o755);
        // A relative link resolves against the link's directory.
        let rel = safe.join("rel.toml");
        std::os::unix::fs::symlink("real.toml", &rel).unwrap();
        check_file(&rel, Role::Config).unwrap();
        // A loop ends.
        let a = safe.join("a");
        let b = safe.join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let e = check_file(&a, Role::Config).unwrap_err().to_string();
        assert!(e.contains("too many levels"), "{e}");
    }

    #[test]
    fn open_nofollow_refuses_links_and_writes_nothing_through_them() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        fs::write(&target, "precious\n").unwrap();
        let link = dir.path().join("leaf.lock");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        match open_nofollow(&link, Role::LockDir, false, 0o640) {
            Err(OpenError::Untrusted(e)) => {
                assert!(e.to_string().contains("symbolic link"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fs::read_to_string(&target).unwrap(), "precious\n");
        // A regular file others can write is refused too.
        let f = dir.path().join("audit.log");
        fs::write(&f, "").unwrap();
        chmod(&f, 0o666);
        assert!(matches!(
            open_nofollow(&f, Role::Audit, true, 0o640),
            Err(OpenError::Untrusted(_))
        ));
        chmod(&f, 0o640);
        open_nofollow(&f, Role::Audit, true, 0o640).unwrap();
    }

    #[test]
    fn would_create_checks_the_nearest_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/locks");
        assert_eq!(
            check_would_create(&deep, Role::LockDir).unwrap(),
            dir.path()
        );
        chmod(dir.path(), 0o1777);
        assert!(check_would_create(&deep, Role::LockDir).is_err());
        chmod(dir.path(), 0o700);
        writable(&deep).unwrap();
    }
}
