//! An Open vSwitch of its own for each test: `ovsdb-server` on a database created from the
//! installed schema and `ovs-vswitchd`, both with their run/log/db directories in a temp
//! dir, listening on a unix socket there (and, on request, on 127.0.0.1). Nothing touches
//! the host's OVS, kernel module or network devices: ovs-vswitchd runs with
//! `--enable-dummy=override --disable-system`, so bridges (`datapath_type=netdev`) and
//! ports are dummy devices; a representor such as `pf0vf3` "exists" as soon as it is added,
//! and tests may run in parallel with each other and with other test runs.
//!
//! Facts this relies on (seen on the CI machines): without ovs-vswitchd a plain ovs-vsctl
//! write waits forever (the harness's own calls use `--timeout`); a bridge that fails to come
//! up still exits 0; bridges are deleted before ovs-vswitchd is stopped.
//!
//! When Open vSwitch is not installed the tests are skipped with a note, unless `CI` is set
//! (`.ci/run` sets it and `scripts/test` installs openvswitch-switch), where that fails.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::Lab;

const SCHEMAS: [&str; 2] = [
    "/usr/share/openvswitch/vswitch.ovsschema",
    "/usr/local/share/openvswitch/vswitch.ovsschema",
];

fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn schema() -> Option<PathBuf> {
    std::env::var_os("OVS_SCHEMA")
        .map(PathBuf::from)
        .into_iter()
        .chain(SCHEMAS.map(PathBuf::from))
        .find(|p| p.is_file())
}

/// A running ovsdb-server + ovs-vswitchd pair.
pub struct Ovs {
    pub dir: tempfile::TempDir,
    ovsdb: Option<Child>,
    vswitchd: Option<Child>,
    pub vsctl: PathBuf,
    appctl: Option<PathBuf>,
}

/// Starts a private OVS with a `br-int` bridge, or returns `None` (test skipped) when Open
/// vSwitch is not installed outside CI.
pub fn start() -> Option<Ovs> {
    let programs = (
        find_program("ovsdb-tool"),
        find_program("ovsdb-server"),
        find_program("ovs-vswitchd"),
        find_program("ovs-vsctl"),
        schema(),
    );
    let (Some(tool), Some(server), Some(vswitchd), Some(vsctl), Some(schema)) = programs else {
        if std::env::var_os("CI").is_some() {
            panic!("Open vSwitch is not installed (scripts/test installs openvswitch-switch)");
        }
        eprintln!("skipping: Open vSwitch (ovsdb-server, ovs-vswitchd, ovs-vsctl) is not installed; scripts/test installs openvswitch-switch");
        return None;
    };
    let dir = tempfile::Builder::new()
        .prefix("mercury-ovs.")
        .tempdir()
        .expect("tempdir");
    let d = dir.path();
    let env = |c: &mut Command| {
        c.env("OVS_RUNDIR", d)
            .env("OVS_LOGDIR", d)
            .env("OVS_DBDIR", d)
            .env("OVS_SYSCONFDIR", d)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    };
    let st = Command::new(&tool)
        .arg("create")
        .arg(d.join("conf.db"))
        .arg(&schema)
        .status()
        .expect("ovsdb-tool");
    assert!(st.success(), "ovsdb-tool create failed");
    let mut c = Command::new(&server);
    c.arg(d.join("conf.db"))
        .arg(format!("--remote=punix:{}", d.join("db.sock").display()))
        .arg(format!(
            "--unixctl={}",
            d.join("ovsdb-server.ctl").display()
        ))
        .arg(format!(
            "--log-file={}",
            d.join("ovsdb-server.log").display()
        ))
        .arg(format!(
            "--pidfile={}",
            d.join("ovsdb-server.pid").display()
        ))
        .arg("--no-chdir");
    env(&mut c);
    let ovsdb = c.spawn().expect("spawn ovsdb-server");
    let mut ovs = Ovs {
        dir,
        ovsdb: Some(ovsdb),
        vswitchd: None,
        vsctl,
        appctl: find_program("ovs-appctl"),
    };
    ovs.wait_for(|o| {
        o.vsctl_raw(&["--no-wait", "--timeout=2", "init"])
            .status
            .success()
    });
    ovs.start_vswitchd(&vswitchd);
    // Waits for ovs-vswitchd to reconfigure: proves it is up.
    ovs.add_bridge("br-int");
    Some(ovs)
}

impl Ovs {
    fn start_vswitchd(&mut self, program: &Path) {
        let d = self.dir.path();
        let mut c = Command::new(program);
        c.arg(format!("unix:{}", self.sock().display()))
            .arg("--enable-dummy=override")
            .arg("--disable-system")
            .arg(format!(
                "--unixctl={}",
                d.join("ovs-vswitchd.ctl").display()
            ))
            .arg(format!(
                "--log-file={}",
                d.join("ovs-vswitchd.log").display()
            ))
            .arg(format!(
                "--pidfile={}",
                d.join("ovs-vswitchd.pid").display()
            ))
            .arg("--no-chdir")
            .env("OVS_RUNDIR", d)
            .env("OVS_LOGDIR", d)
            .env("OVS_DBDIR", d)
            .env("OVS_SYSCONFDIR", d)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.vswitchd = Some(c.spawn().expect("spawn ovs-vswitchd"));
    }

    fn wait_for(&self, ready: impl Fn(&Ovs) -> bool) {
        let until = Instant::now() + Duration::from_secs(20);
        while !ready(self) {
            assert!(
                Instant::now() < until,
                "OVS did not come up; logs in {}",
                self.dir.path().display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The database socket.
    pub fn sock(&self) -> PathBuf {
        self.dir.path().join("db.sock")
    }

    /// The `ovs_db` / `--db` value for the unix socket.
    pub fn db(&self) -> String {
        format!("unix:{}", self.sock().display())
    }

    fn vsctl_raw(&self, args: &[&str]) -> Output {
        Command::new(&self.vsctl)
            .arg(format!("--db={}", self.db()))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("ovs-vsctl")
    }

    /// Runs `ovs-vsctl --db=... --timeout=10 ARGS`, asserting success; returns stdout.
    pub fn vsctl(&self, args: &[&str]) -> String {
        let mut all = vec!["--timeout=10"];
        all.extend_from_slice(args);
        let out = self.vsctl_raw(&all);
        assert!(
            out.status.success(),
            "ovs-vsctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Adds a bridge with `datapath_type=netdev` (no kernel module).
    pub fn add_bridge(&self, name: &str) {
        self.vsctl(&[
            "--",
            "--may-exist",
            "add-br",
            name,
            "--",
            "set",
            "Bridge",
            name,
            "datapath_type=netdev",
        ]);
    }

    /// Adds a port to a bridge directly (not through Mercury).
    pub fn add_port(&self, bridge: &str, port: &str) {
        self.vsctl(&["--", "--may-exist", "add-port", bridge, port]);
    }

    /// Whether a Port row of that name exists.
    pub fn has_port(&self, port: &str) -> bool {
        !self
            .vsctl(&["--if-exists", "get", "Port", port, "name"])
            .is_empty()
    }

    /// The bridge holding `port`.
    pub fn bridge_of(&self, port: &str) -> String {
        self.vsctl(&["port-to-br", port])
    }

    /// `ovs-vsctl get TABLE RECORD COLUMN` as printed (`120`, `[]`, `[10, 20]`, `access`).
    pub fn get(&self, table: &str, record: &str, column: &str) -> String {
        self.vsctl(&["get", table, record, column])
    }

    /// An `external_ids` value of the Interface, unquoted; `None` when the key is absent.
    pub fn iface_id(&self, port: &str, key: &str) -> Option<String> {
        let v = self.vsctl(&[
            "--if-exists",
            "get",
            "Interface",
            port,
            &format!("external_ids:{key}"),
        ]);
        (!v.is_empty()).then(|| v.trim_matches('"').to_string())
    }

    /// The Port's VLAN columns as printed: (tag, trunks, vlan_mode).
    pub fn vlans(&self, port: &str) -> (String, String, String) {
        (
            self.get("Port", port, "tag"),
            self.get("Port", port, "trunks"),
            self.get("Port", port, "vlan_mode"),
        )
    }

    /// A deterministic dump of what Mercury may change (bridges, ports, interfaces), to
    /// prove a refused request left the database untouched.
    pub fn dump(&self) -> String {
        [
            ("Bridge", "name,ports"),
            (
                "Port",
                "_uuid,name,tag,trunks,vlan_mode,interfaces,external_ids",
            ),
            ("Interface", "_uuid,name,external_ids,mtu_request,type"),
        ]
        .iter()
        .map(|(t, c)| self.vsctl(&["--format=json", &format!("--columns={c}"), "list", t]))
        .collect::<Vec<_>>()
        .join("\n")
    }

    /// Also listens on 127.0.0.1 (OVSDB's `ptcp:`); returns the port.
    pub fn listen_tcp(&self) -> u16 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let appctl = self.appctl.as_ref().expect("ovs-appctl is needed for ptcp");
        let st = Command::new(appctl)
            .arg("-t")
            .arg(self.dir.path().join("ovsdb-server.ctl"))
            .args(["ovsdb-server/add-remote", &format!("ptcp:{port}:127.0.0.1")])
            .status()
            .expect("ovs-appctl");
        assert!(st.success(), "add-remote ptcp:{port}");
        self.wait_for(|_| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
        port
    }

    /// Stops ovs-vswitchd (bridges stay in OVSDB): writes then wait for it until --timeout.
    pub fn stop_vswitchd(&mut self) {
        if let Some(mut c) = self.vswitchd.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Writes a wrapper for ovs-vsctl that logs every invocation (one line of arguments) to
    /// `<name>.log` and then runs ovs-vsctl. With `fail_on_tag`, an invocation that sets a
    /// tag gets one more command appended that fails (`set Port` of a row that does not
    /// exist), after Mercury's own commands: a failure in the middle of a plug.
    pub fn wrapper(&self, name: &str, fail_on_tag: bool) -> PathBuf {
        let path = self.dir.path().join(name);
        let log = self.dir.path().join(format!("{name}.log"));
        let inject = if fail_on_tag {
            format!(
                "for a in \"$@\"; do case \"$a\" in tag=*) exec {vsctl} \"$@\" -- set Port mercury-no-such-port tag=1;; esac; done\n",
                vsctl = self.vsctl.display()
            )
        } else {
            String::new()
        };
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\n{inject}exec {vsctl} \"$@\"\n",
            log = log.display(),
            vsctl = self.vsctl.display()
        );
        std::fs::write(&path, script).expect("write wrapper");
        crate::common::set_mode(&path, 0o755);
        path
    }

    /// A wrapper that, on a write adding a port, prints what ovs-vsctl prints when
    /// ovs-vswitchd cannot open the device (a representor that does not exist yet) — with
    /// dummy devices the real message cannot happen — and then runs ovs-vsctl.
    pub fn wrapper_missing_device(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        let script = format!(
            "#!/bin/sh
for a in \"$@\"; do case \"$a\" in add-port) \
             echo \"ovs-vsctl: Error detected while setting up 'pf0vf3': could not open network device pf0vf3 (No such device).  See ovs-vswitchd log for details.\" >&2; \
             echo 'ovs-vsctl: The default log directory is \"/var/log/openvswitch\".' >&2;; esac; done\nexec {vsctl} \"$@\"\n",
            vsctl = self.vsctl.display()
        );
        std::fs::write(&path, script).expect("write wrapper");
        crate::common::set_mode(&path, 0o755);
        path
    }

    /// The invocations a wrapper logged (empty when it never ran).
    pub fn wrapper_log(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join(format!("{name}.log")))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        // Bridges first, while ovs-vswitchd still runs to remove their datapath ports.
        if self.vswitchd.is_some() {
            let out = self.vsctl_raw(&["--timeout=5", "list-br"]);
            let bridges = String::from_utf8_lossy(&out.stdout).into_owned();
            for b in bridges.lines().filter(|b| !b.is_empty()) {
                let _ = self.vsctl_raw(&["--timeout=5", "--if-exists", "del-br", b]);
            }
        }
        for (child, ctl) in [
            (self.vswitchd.take(), "ovs-vswitchd.ctl"),
            (self.ovsdb.take(), "ovsdb-server.ctl"),
        ] {
            let Some(mut child) = child else { continue };
            if let Some(appctl) = &self.appctl {
                let _ = Command::new(appctl)
                    .arg("-t")
                    .arg(self.dir.path().join(ctl))
                    .arg("exit")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A Mercury lab with one `ovs` device, `dpu-7` (alias `dpu-7.dc1`), reaching this OVS with
/// `transport = "local"` unless `extra` says otherwise. VLANs 10 and 100-199 are allowed.
pub fn lab(ovs: &Ovs, extra: &str) -> Lab {
    let dir = tempfile::tempdir().expect("tempdir");
    let lab = Lab {
        config: dir.path().join("mercury.toml"),
        dir,
    };
    let transport = if extra.contains("transport") {
        String::new()
    } else {
        "transport = \"local\"\n".to_string()
    };
    let db = if extra.contains("ovs_db") {
        String::new()
    } else {
        format!("ovs_db = \"{}\"\n", ovs.db())
    };
    lab.write_config(&format!(
        "[defaults]\nlock_dir = \"locks\"\naudit_log = \"audit.log\"\nlock_timeout = 20\n\
         command_timeout = 10\nallowed_vlans = [\"10\", \"100-199\"]\n\n\
         [devices.dpu-7]\nplatform = \"ovs\"\naliases = [\"dpu-7.dc1\"]\n{transport}{db}{extra}\n"
    ));
    lab
}
