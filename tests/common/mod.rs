//! Shared harness for integration tests: run the real `mercury` binary (args, stdin, env →
//! exit code, JSON stdout, stderr), and build throwaway labs of `mercury-sim` devices.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

pub mod counting;
pub mod sshd;
pub mod tls;

/// The `mercury` binary under test.
pub fn mercury_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mercury"))
}

/// What `readelf ARGS` prints about the `mercury` binary (binutils, which the Rust
/// toolchain's linker needs): its dynamic section, symbols, section headers.
pub fn readelf(args: &[&str]) -> String {
    let out = Command::new("readelf")
        .args(args)
        .arg(mercury_bin())
        .output()
        .expect("readelf (binutils) runs");
    assert!(out.status.success(), "readelf {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The simulator binary, built by the same `cargo test --workspace` run into the same
/// target directory.
pub fn sim_bin() -> PathBuf {
    let p = mercury_bin().with_file_name("mercury-sim");
    assert!(
        p.exists(),
        "{} is missing: run the workspace tests (cargo nextest run --workspace) or cargo build -p mercury-sim",
        p.display()
    );
    p
}

/// A finished run.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// The JSON result; panics (test failure) if stdout is not exactly one JSON object.
    pub fn json(&self) -> Value {
        let v: Value = serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        });
        assert!(v.is_object(), "{v}");
        v
    }

    /// Asserts the exit code (showing the result when it differs).
    pub fn expect(&self, code: i32) -> Value {
        assert_eq!(
            self.code, code,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        let v = self.json();
        assert_eq!(v["rc"], code, "{v}");
        v
    }

    /// The input lines of the result's commands.
    pub fn inputs(&self) -> Vec<String> {
        self.json()["commands"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| c["input"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A command-line builder for the real binary.
pub struct Run {
    cmd: Command,
    stdin: Option<String>,
}

/// Starts a builder for `mercury ARGS`.
pub fn mercury<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = Command::new(mercury_bin());
    cmd.args(args);
    cmd.env_remove("MERCURY_CONFIG")
        .env_remove("SSH_ORIGINAL_COMMAND")
        .env_remove("SSH_CONNECTION");
    Run { cmd, stdin: None }
}

impl Run {
    pub fn stdin(mut self, s: &str) -> Run {
        self.stdin = Some(s.to_string());
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Run {
        self.cmd.env(k, v);
        self
    }

    pub fn spawn(mut self) -> std::process::Child {
        self.cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.cmd.spawn().expect("spawn mercury");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = self.stdin.take().unwrap_or_default();
        // Written from a thread: mercury may stop reading early (an oversized request) and
        // exit, and a large write must neither block the test nor fail it with EPIPE.
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        child
    }

    pub fn run(self) -> Ran {
        let out = self.spawn().wait_with_output().expect("wait");
        Ran {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Collects a child's output as a [`Ran`].
pub fn finish(child: std::process::Child) -> Ran {
    let out = child.wait_with_output().expect("wait");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temporary lab: a config with simulated devices, their state files and an audit log.
pub struct Lab {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
}

/// One simulated device in a lab.
pub struct SimDevice<'a> {
    pub name: &'a str,
    pub platform: &'a str,
    /// Extra `mercury-sim` flags (faults).
    pub sim_args: &'a [&'a str],
    /// Extra TOML lines for the device table.
    pub extra: &'a str,
}

impl<'a> SimDevice<'a> {
    pub fn new(name: &'a str, platform: &'a str) -> Self {
        SimDevice {
            name,
            platform,
            sim_args: &[],
            extra: "",
        }
    }
}

impl Lab {
    /// A lab whose `[defaults]` allow VLANs 10 and 100-199, idle VLAN 10.
    pub fn new(devices: &[SimDevice]) -> Lab {
        Lab::with_defaults(
            devices,
            "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
        )
    }

    pub fn with_defaults(devices: &[SimDevice], defaults: &str) -> Lab {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut text = format!(
            "[defaults]\nlock_dir = \"locks\"\naudit_log = \"audit.log\"\nlock_timeout = 20\ncommand_timeout = 10\n{defaults}\n"
        );
        for d in devices {
            let state = dir.path().join(format!("{}.json", d.name));
            let transcript = dir.path().join(format!("{}.transcript", d.name));
            let mut argv = vec![
                sim_bin().display().to_string(),
                "--platform".into(),
                d.platform.into(),
                "--hostname".into(),
                d.name.into(),
                "--state".into(),
                state.display().to_string(),
                "--transcript".into(),
                transcript.display().to_string(),
            ];
            argv.extend(d.sim_args.iter().map(|s| s.to_string()));
            text.push_str(&format!(
                "\n[devices.{}]\nplatform = \"{}\"\ntransport = \"command\"\nargv = {}\n{}\n",
                d.name,
                d.platform,
                serde_json::to_string(&argv).expect("argv"),
                d.extra
            ));
        }
        let lab = Lab {
            config: dir.path().join("mercury.toml"),
            dir,
        };
        lab.write_config(&text);
        lab
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(&self.config, text).expect("write config");
        set_mode(&self.config, 0o600);
    }

    pub fn append_config(&self, text: &str) {
        let mut t = std::fs::read_to_string(&self.config).expect("read config");
        t.push_str(text);
        self.write_config(&t);
    }

    /// `mercury --config LAB ARGS`.
    pub fn mercury<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut all: Vec<std::ffi::OsString> = vec!["--config".into(), self.config.clone().into()];
        all.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        mercury(all)
    }

    /// `mercury attach-port --device D --port P --vlan V --reason test`.
    pub fn attach(&self, device: &str, port: &str, vlan: &str) -> Run {
        self.mercury([
            "attach-port",
            "--device",
            device,
            "--port",
            port,
            "--vlan",
            vlan,
            "--reason",
            "test",
        ])
    }

    /// The simulator's state JSON for a device.
    pub fn state(&self, device: &str) -> Value {
        let out = Command::new(sim_bin())
            .args(["show", "--state"])
            .arg(self.dir.path().join(format!("{device}.json")))
            .output()
            .expect("mercury-sim show");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "sim state for {device}: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// A running-config port entry, e.g. `lab.port("leaf", "GigabitEthernet1/0/5")`.
    pub fn port(&self, device: &str, port: &str) -> Value {
        self.state(device)["running"]["ports"][port].clone()
    }

    /// The transcript lines the simulator received (empty when never contacted).
    pub fn transcript(&self, device: &str) -> Vec<String> {
        let path = self.dir.path().join(format!("{device}.transcript"));
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v["line"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The audit records, parsed.
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("audit.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line not JSON ({e}): {l}"))
            })
            .collect()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}
