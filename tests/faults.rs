//! The fault matrix: every way a device, the network, the lock or the audit log can fail,
//! over each transport it applies to (`command`: mercury-sim spawned locally; `ssh`: a real
//! OpenSSH sshd with mercury-sim behind the login). One table, [`CASES`]; one test per row
//! and transport, all checked by [`check`] the same way:
//!
//! - the documented exit code and `error_kind` (DESIGN §4), and a message naming the cause;
//! - no hang: the run ends within [`BOUND`] (each case sets 1-second timeouts);
//! - the lock is released: every slot file of the device can be locked afterwards;
//! - the audit log has the request's `finished` record with the same exit code, preceded
//!   by a `started` record whenever the device was contacted — or, where the audit log
//!   itself is the fault, a clear error and no device contact;
//! - nothing reported as success that was not applied: the simulator's own state (running
//!   and saved configuration) is what the row expects, and a failure is never `ok`.
//!
//! Message details of several of these faults are also asserted in tests/core.rs
//! (`exit_69_when_the_device_goes_away`, `exit_75_when_...`, `unwritable_audit_log_...`) and
//! tests/ssh.rs (host keys, authentication stages, jump hosts); this file is the one place
//! that checks every fault against all the invariants above.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use common::{Lab, Ran};
use serde_json::Value;

/// No fault may keep a run alive longer than this (timeouts in the cases are 1 s).
const BOUND: Duration = Duration::from_secs(30);

/// How the test reaches the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Command,
    Ssh,
}

/// What stands where the device should be.
#[derive(Clone, Copy, Debug)]
enum Device {
    /// mercury-sim, with the row's faults.
    Sim,
    /// Nothing listens on the port (ssh only).
    Refused,
    /// A TCP listener that never speaks (ssh only).
    SilentTcp,
    /// The sim behind sshd, but the pinned host key is another server's (ssh only).
    WrongHostKey,
    /// The sim behind sshd, logged into with a wrong password (ssh only).
    BadPassword,
}

/// What happens around the run.
#[derive(Clone, Copy, Debug)]
enum Around {
    Nothing,
    /// Another live process holds the device's lock for the whole run.
    LockHeld,
    /// A process took the lock and was killed with SIGKILL before the run.
    LockHolderKilled,
    /// The audit log cannot be appended to.
    AuditUnwritable,
}

/// What the simulator's state must show for the requested port afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum After {
    /// In VLAN 120, running and saved (Junos: committed).
    Applied,
    /// Not in VLAN 120, neither running nor saved.
    NotApplied,
    /// In the running configuration only: the lines were applied, the save failed (and the
    /// run says so; platforms without a candidate cannot take the lines back).
    RunningNotSaved,
    /// The device was never reached: no session at all.
    Untouched,
}

struct Case {
    name: &'static str,
    platform: &'static str,
    device: Device,
    faults: &'static [&'static str],
    around: Around,
    rc: i32,
    error_kind: &'static str,
    /// A piece of the message.
    msg: &'static str,
    after: After,
}

const CASES: &[Case] = &[
    Case {
        name: "healthy",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &[],
        around: Around::Nothing,
        rc: 0,
        error_kind: "",
        msg: "",
        after: After::Applied,
    },
    Case {
        name: "tcp refused",
        platform: "cisco_ios",
        device: Device::Refused,
        faults: &[],
        around: Around::Nothing,
        rc: 69,
        error_kind: "unreachable",
        msg: "TCP connect to 127.0.0.1:",
        after: After::Untouched,
    },
    Case {
        name: "device refuses the session",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &["max-sessions=0"],
        around: Around::Nothing,
        rc: 69,
        error_kind: "unreachable",
        msg: "connection closed",
        after: After::NotApplied,
    },
    Case {
        name: "silent tcp",
        platform: "cisco_ios",
        device: Device::SilentTcp,
        faults: &[],
        around: Around::Nothing,
        rc: 69,
        error_kind: "unreachable",
        msg: "did not speak SSH",
        after: After::Untouched,
    },
    Case {
        name: "wrong host key",
        platform: "cisco_ios",
        device: Device::WrongHostKey,
        faults: &[],
        around: Around::Nothing,
        rc: 77,
        error_kind: "not_permitted",
        msg: "host key of 127.0.0.1:",
        after: After::Untouched,
    },
    Case {
        name: "bad password",
        platform: "cisco_ios",
        device: Device::BadPassword,
        faults: &[],
        around: Around::Nothing,
        rc: 77,
        error_kind: "not_permitted",
        msg: "authentication as mercury-sshtest@",
        after: After::Untouched,
    },
    Case {
        name: "drop mid-config",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &["drop-after=4"],
        around: Around::Nothing,
        rc: 69,
        error_kind: "unreachable",
        msg: "may be partly applied",
        after: After::NotApplied,
    },
    Case {
        name: "hang mid-config",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &["hang-after=3"],
        around: Around::Nothing,
        rc: 75,
        error_kind: "temporary",
        msg: "timed out after",
        after: After::NotApplied,
    },
    Case {
        name: "no prompt after login",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &["no-prompt-after-login"],
        around: Around::Nothing,
        rc: 75,
        error_kind: "temporary",
        msg: "the login prompt",
        after: After::NotApplied,
    },
    Case {
        name: "error marker",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &["reject=access vlan 120"],
        around: Around::Nothing,
        rc: 1,
        error_kind: "device_rejected",
        msg: "switchport access vlan 120",
        after: After::NotApplied,
    },
    Case {
        name: "junos error marker",
        platform: "juniper",
        device: Device::Sim,
        faults: &["reject=vlan members 120"],
        around: Around::Nothing,
        rc: 1,
        error_kind: "device_rejected",
        msg: "vlan members 120",
        after: After::NotApplied,
    },
    Case {
        name: "commit failure",
        platform: "juniper",
        device: Device::Sim,
        faults: &["commit-fail"],
        around: Around::Nothing,
        rc: 1,
        error_kind: "device_rejected",
        msg: "commit",
        after: After::NotApplied,
    },
    Case {
        name: "config database locked",
        platform: "juniper",
        device: Device::Sim,
        faults: &["db-locked"],
        around: Around::Nothing,
        rc: 75,
        error_kind: "temporary",
        msg: "locked",
        after: After::NotApplied,
    },
    Case {
        name: "nvue apply fails",
        platform: "cumulus_nvue",
        device: Device::Sim,
        faults: &["commit-fail"],
        around: Around::Nothing,
        rc: 1,
        error_kind: "device_rejected",
        msg: "nv config apply",
        after: After::NotApplied,
    },
    Case {
        name: "nvue apply finds the database locked",
        platform: "cumulus_nvue",
        device: Device::Sim,
        faults: &["db-locked"],
        around: Around::Nothing,
        rc: 75,
        error_kind: "temporary",
        msg: "locked",
        after: After::NotApplied,
    },
    Case {
        name: "ios save fails with the database locked",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &["db-locked"],
        around: Around::Nothing,
        rc: 75,
        error_kind: "temporary",
        msg: "copy running-config startup-config",
        after: After::RunningNotSaved,
    },
    Case {
        name: "lock held by a live process",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &[],
        around: Around::LockHeld,
        rc: 75,
        error_kind: "temporary",
        msg: "lock not acquired",
        after: After::Untouched,
    },
    Case {
        name: "lock holder killed",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &[],
        around: Around::LockHolderKilled,
        rc: 0,
        error_kind: "",
        msg: "",
        after: After::Applied,
    },
    Case {
        name: "audit log unwritable",
        platform: "cisco_ios",
        device: Device::Sim,
        faults: &[],
        around: Around::AuditUnwritable,
        rc: 78,
        error_kind: "config",
        msg: "audit log",
        after: After::Untouched,
    },
];

/// Tests, one per row and transport. Rows whose device only exists over SSH (TCP, host
/// keys, passwords) have no command variant.
macro_rules! matrix {
    ($($test:ident: $name:literal over $via:ident;)*) => {
        $(
            #[test]
            fn $test() {
                run_case($name, Via::$via);
            }
        )*
        /// Every row of the table has at least one test.
        #[test]
        fn every_row_is_tested() {
            let tested = [$($name),*];
            for c in CASES {
                assert!(tested.contains(&c.name), "row {:?} has no test", c.name);
            }
        }
    };
}

matrix! {
    healthy_over_command: "healthy" over Command;
    healthy_over_ssh: "healthy" over Ssh;
    tcp_refused_over_ssh: "tcp refused" over Ssh;
    device_refuses_the_session_over_command: "device refuses the session" over Command;
    device_refuses_the_session_over_ssh: "device refuses the session" over Ssh;
    silent_tcp_over_ssh: "silent tcp" over Ssh;
    wrong_host_key_over_ssh: "wrong host key" over Ssh;
    bad_password_over_ssh: "bad password" over Ssh;
    drop_mid_config_over_command: "drop mid-config" over Command;
    drop_mid_config_over_ssh: "drop mid-config" over Ssh;
    hang_mid_config_over_command: "hang mid-config" over Command;
    hang_mid_config_over_ssh: "hang mid-config" over Ssh;
    no_prompt_after_login_over_command: "no prompt after login" over Command;
    no_prompt_after_login_over_ssh: "no prompt after login" over Ssh;
    error_marker_over_command: "error marker" over Command;
    error_marker_over_ssh: "error marker" over Ssh;
    junos_error_marker_over_command: "junos error marker" over Command;
    junos_error_marker_over_ssh: "junos error marker" over Ssh;
    commit_failure_over_command: "commit failure" over Command;
    commit_failure_over_ssh: "commit failure" over Ssh;
    config_database_locked_over_command: "config database locked" over Command;
    config_database_locked_over_ssh: "config database locked" over Ssh;
    nvue_apply_fails_over_command: "nvue apply fails" over Command;
    nvue_apply_fails_over_ssh: "nvue apply fails" over Ssh;
    nvue_apply_finds_the_database_locked_over_command: "nvue apply finds the database locked" over Command;
    nvue_apply_finds_the_database_locked_over_ssh: "nvue apply finds the database locked" over Ssh;
    ios_save_fails_with_the_database_locked_over_command: "ios save fails with the database locked" over Command;
    ios_save_fails_with_the_database_locked_over_ssh: "ios save fails with the database locked" over Ssh;
    lock_held_by_a_live_process_over_command: "lock held by a live process" over Command;
    lock_held_by_a_live_process_over_ssh: "lock held by a live process" over Ssh;
    lock_holder_killed_over_command: "lock holder killed" over Command;
    lock_holder_killed_over_ssh: "lock holder killed" over Ssh;
    audit_log_unwritable_over_command: "audit log unwritable" over Command;
    audit_log_unwritable_over_ssh: "audit log unwritable" over Ssh;
}

/// The device's name in every lab, and the request's port per platform.
const DEVICE: &str = "leaf";

fn port_of(platform: &str) -> (&'static str, &'static str) {
    match platform {
        "juniper" => ("ge-0/0/5", "ge-0/0/5"),
        "cumulus_nvue" => ("swp5", "swp5"),
        _ => ("Gi1/0/5", "GigabitEthernet1/0/5"),
    }
}

/// Timeouts that keep every fault short; each is what its fault is bounded by.
const DEVICE_KEYS: &str = "connect_timeout = 1\ncommand_timeout = 1\nlock_timeout = 1\n";

/// Whatever must stay alive during the run (sshd, a lock holder).
#[derive(Default)]
struct Keep {
    _sshd: Option<Sshd>,
    _holder: Option<Holder>,
}

/// Another process holding the device lock; killed (SIGKILL) and reaped when dropped.
struct Holder(Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_case(name: &str, via: Via) {
    if via == Via::Ssh && !common::sshd::available() {
        return;
    }
    let case = CASES
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no row {name:?}"));
    let lab = Lab::new(&[]);
    seed(&lab, case.platform);
    let mut keep = wire(&lab, case, via);
    match case.around {
        Around::Nothing => {}
        Around::LockHeld => keep._holder = Some(hold_lock(&lab)),
        // SIGKILL: nothing of the holder runs after it.
        Around::LockHolderKilled => drop(hold_lock(&lab)),
        Around::AuditUnwritable => std::fs::create_dir(lab.path("audit.log")).unwrap(),
    }
    let sessions_before = sessions_total(&lab);
    let port_before = port_state(&lab, case.platform);
    let (iface, _) = port_of(case.platform);
    let id = format!("fault-{}", name.replace(' ', "-"));
    let started = Instant::now();
    let r = lab
        .mercury([
            "attach-port",
            "--device",
            DEVICE,
            "--port",
            iface,
            "--vlan",
            "120",
            "--reason",
            "fault matrix",
            "--request-id",
            &id,
        ])
        .run();
    let took = started.elapsed();
    // The other process's lock goes with it; what must be free afterwards is Mercury's.
    drop(keep);
    check(case, via, &lab, &r, &id, took, sessions_before);
    check_truth(case, via, &lab, &r, &id, &port_before);
}

/// The requested port in the simulator's running and saved configuration.
fn port_state(lab: &Lab, platform: &str) -> (Value, Value) {
    let (_, key) = port_of(platform);
    match state(lab) {
        Some(s) => (
            s["running"]["ports"][key].clone(),
            s["saved"]["ports"][key].clone(),
        ),
        None => (Value::Null, Value::Null),
    }
}

/// Nothing that changed is ever reported unchanged: the simulator's port before and after
/// against the result's `changed` and `partial` and the audit record. A port whose running
/// configuration differs was reported changed; a result that says unchanged left it as it
/// was; a failure that left the saved configuration behind says `saved: false`; a line
/// sent without an answer is listed as in flight.
fn check_truth(case: &Case, via: Via, lab: &Lab, r: &Ran, id: &str, before: &(Value, Value)) {
    let what = format!("{} over {via:?} (truth)", case.name);
    let v = r.json();
    let after = port_state(lab, case.platform);
    let running_changed = before.0 != after.0;
    if running_changed {
        assert_eq!(v["changed"], true, "{what}: the port changed: {v}");
    }
    if v["changed"] == false {
        assert!(!running_changed, "{what}: reported unchanged: {v}");
    }
    let partial = &v["partial"];
    if case.rc != 0 && running_changed {
        assert_eq!(partial["took_effect"], true, "{what}: {v}");
        let msg = v["msg"].as_str().unwrap_or_default();
        assert!(msg.contains("PARTLY APPLIED"), "{what}: {msg}");
    }
    if partial["saved"] == false {
        assert_ne!(after.0, after.1, "{what}: said not saved: {v}");
    }
    if matches!(v["error_kind"].as_str(), Some("unreachable" | "temporary"))
        && partial.get("accepted").is_some()
    {
        // The line being sent when the answer stopped coming is in the result, and in the
        // commands.
        if let Some(l) = partial["in_flight"].as_str() {
            assert!(
                r.inputs().iter().any(|i| i == l),
                "{what}: in-flight line not in commands: {v}"
            );
        }
    }
    if matches!(case.around, Around::AuditUnwritable) {
        return;
    }
    let finished = lab
        .audit()
        .into_iter()
        .find(|a| a["request_id"] == id && a["event"] == "finished")
        .unwrap_or_else(|| panic!("{what}: no finished record"));
    assert_eq!(
        finished["how"]["changed"], v["changed"],
        "{what}: {finished}"
    );
    assert_eq!(
        finished["how"]["partial"], v["partial"],
        "{what}: {finished}"
    );
}

/// Runs the simulator once without faults to create VLAN 120 (Junos refuses to commit a
/// port into a VLAN that does not exist), so that only the injected fault can fail a run.
fn seed(lab: &Lab, platform: &str) {
    let lines: &[&str] = match platform {
        "juniper" => &[
            "configure",
            "set vlans v120 vlan-id 120",
            "commit",
            "exit",
            "exit",
        ],
        "cumulus_nvue" => &[
            "nv set bridge domain br_default vlan 120",
            "nv config apply -y",
            "nv config save",
            "exit",
        ],
        _ => &[
            "configure terminal",
            "vlan 120",
            "end",
            "write memory",
            "exit",
        ],
    };
    let argv = lab.sim_argv(DEVICE, platform, &[]);
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{}\n", lines.join("\n")).as_bytes())
        .unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success(), "seeding the simulator");
    // Start the transcript afresh: the seed is not the run under test.
    let _ = std::fs::remove_file(lab.path(&format!("{DEVICE}.transcript")));
}

/// Adds `[devices.leaf]` reaching the row's device over `via`.
fn wire(lab: &Lab, case: &Case, via: Via) -> Keep {
    let mut keep = Keep::default();
    match (via, case.device) {
        (Via::Command, Device::Sim) => lab.append_config(&format!(
            "\n[devices.{DEVICE}]\nplatform = \"{}\"\ntransport = \"command\"\nargv = {}\n{DEVICE_KEYS}",
            case.platform,
            serde_json::to_string(&lab.sim_argv(DEVICE, case.platform, &faults(case))).unwrap()
        )),
        (Via::Command, d) => panic!("{d:?} has no command-transport form"),
        (Via::Ssh, Device::Refused | Device::SilentTcp) => {
            let port = match case.device {
                Device::Refused => common::sshd::free_port(),
                _ => common::sshd::silent_listener(),
            };
            let key = lab.path("id_ed25519");
            common::sshd::keygen(&key, "ed25519", "");
            common::set_mode(&key, 0o600);
            lab.append_config(&format!(
                "\n[devices.{DEVICE}]\nplatform = \"{}\"\naddress = \"127.0.0.1\"\nport = {port}\nusername = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\n{DEVICE_KEYS}",
                case.platform,
                key.display(),
                stranger_fingerprint(lab)
            ));
        }
        (Via::Ssh, Device::BadPassword) => {
            common::sshd::ensure_password_user();
            let sshd = lab.sshd_for(
                DEVICE,
                case.platform,
                &faults(case),
                SshdOptions {
                    passwords: true,
                    // One method: each refused PAM attempt costs pam_unix's failure delay.
                    extra: "KbdInteractiveAuthentication no".into(),
                    ..SshdOptions::default()
                },
            );
            let pw = lab.secret("password", "not-the-password");
            lab.add_ssh_device(
                DEVICE,
                case.platform,
                &sshd,
                &format!(
                    "username = \"{}\"\npassword_file = \"{}\"\nhost_key = \"{}\"\n{DEVICE_KEYS}",
                    common::sshd::PASSWORD_USER,
                    pw.display(),
                    sshd.fingerprint
                ),
            );
            keep._sshd = Some(sshd);
        }
        (Via::Ssh, Device::Sim | Device::WrongHostKey) => {
            let sshd = lab.sshd_for(
                DEVICE,
                case.platform,
                &faults(case),
                SshdOptions::default(),
            );
            let key = sshd.user_key("id_ed25519", "ed25519", "");
            let host_key = match case.device {
                Device::WrongHostKey => stranger_fingerprint(lab),
                _ => sshd.fingerprint.clone(),
            };
            lab.add_ssh_device(
                DEVICE,
                case.platform,
                &sshd,
                &format!(
                    "username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{host_key}\"\n{DEVICE_KEYS}",
                    key.display()
                ),
            );
            keep._sshd = Some(sshd);
        }
    }
    keep
}

fn faults(case: &Case) -> Vec<&'static str> {
    case.faults.iter().flat_map(|f| ["--fault", f]).collect()
}

fn stranger_fingerprint(lab: &Lab) -> String {
    let p = lab.path("stranger_host_key");
    if !p.exists() {
        common::sshd::keygen(&p, "ed25519", "");
    }
    common::sshd::fingerprint_of(&p.with_extension("pub"))
}

/// Starts another process that takes the device's lock (slot 0) the way Mercury does
/// (`flock`) and keeps it until killed; returns once the lock is held.
fn hold_lock(lab: &Lab) -> Holder {
    let dir = lab.path("locks");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = dir.join(format!("{DEVICE}.lock"));
    // `exec sleep`: the process that holds the descriptor is the one the test kills (a
    // forked child of flock(1) would inherit the lock and outlive it).
    let holder = Holder(
        Command::new("sh")
            .args(["-c", r#"exec 9>>"$0" && flock -x 9 && exec sleep 60"#])
            .arg(&lock)
            .stdout(Stdio::null())
            .spawn()
            .expect("sh and flock(1) from util-linux"),
    );
    let t = Instant::now();
    loop {
        let f = OpenOptions::new().write(true).open(&lock);
        if let Ok(f) = f {
            if f.try_lock().is_err() {
                return holder;
            }
        }
        assert!(t.elapsed() < BOUND, "the holder never took the lock");
        // Polling a lock another process is about to take: bounded by BOUND.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The simulator's state, or `None` when it was never started.
fn state(lab: &Lab) -> Option<Value> {
    lab.path(&format!("{DEVICE}.json"))
        .exists()
        .then(|| lab.state(DEVICE))
}

fn sessions_total(lab: &Lab) -> u64 {
    state(lab)
        .and_then(|s| s["sessions"]["total"].as_u64())
        .unwrap_or(0)
}

fn check(
    case: &Case,
    via: Via,
    lab: &Lab,
    r: &Ran,
    id: &str,
    took: Duration,
    sessions_before: u64,
) {
    let what = format!("{} over {via:?}", case.name);
    // No hang past the deadline.
    assert!(took < BOUND, "{what}: took {took:?}");
    // The documented exit code, kind and message.
    let v = r.expect(case.rc);
    let msg = v["msg"].as_str().unwrap_or_default();
    assert_eq!(
        v["error_kind"].as_str().unwrap_or_default(),
        case.error_kind,
        "{what}: {v}"
    );
    assert!(msg.contains(case.msg), "{what}: message {msg:?}");
    assert_eq!(v["ok"], case.rc == 0, "{what}: {v}");
    // The lock is released: every slot file that exists can be taken now.
    if let Ok(entries) = std::fs::read_dir(lab.path("locks")) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "lock") {
                let f = OpenOptions::new().write(true).open(&p).unwrap();
                assert!(
                    f.try_lock().is_ok(),
                    "{what}: {} still locked after the run",
                    p.display()
                );
            }
        }
    }
    // The audit trail (or, when the audit log is the fault, no device contact at all).
    check_audit(case, &what, lab, id, &v);
    // The device's own state.
    check_state(case, &what, lab, sessions_before, &v);
}

fn check_audit(case: &Case, what: &str, lab: &Lab, id: &str, v: &Value) {
    if matches!(case.around, Around::AuditUnwritable) {
        assert!(
            lab.transcript(DEVICE).is_empty(),
            "{what}: device contacted without an audit record"
        );
        return;
    }
    let records: Vec<Value> = lab
        .audit()
        .into_iter()
        .filter(|r| r["request_id"] == id)
        .collect();
    let events: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap_or_default())
        .collect();
    let finished = records
        .iter()
        .find(|r| r["event"] == "finished")
        .unwrap_or_else(|| panic!("{what}: no finished audit record: {records:?}"));
    assert_eq!(finished["how"]["rc"], case.rc, "{what}: {finished}");
    assert_eq!(
        events.last(),
        Some(&"finished"),
        "{what}: finished is not last: {events:?}"
    );
    let contacted = finished["how"]["device_contacted"] != false;
    if contacted {
        assert_eq!(
            events,
            ["started", "finished"],
            "{what}: the device was contacted, so a started record must come first"
        );
        assert_eq!(records[0]["what"]["device"], DEVICE, "{what}");
    }
    if case.rc != 0 {
        assert!(
            finished["how"]["outcome"] != "ok",
            "{what}: audit says ok: {finished}"
        );
        // The result and the audit agree on what happened (check_truth compares `changed`
        // with the device).
        assert_eq!(finished["how"]["msg"], v["msg"], "{what}");
        assert_eq!(finished["how"]["error_kind"], v["error_kind"], "{what}");
    }
}

fn check_state(case: &Case, what: &str, lab: &Lab, sessions_before: u64, v: &Value) {
    let (_, key) = port_of(case.platform);
    let st = state(lab);
    let in_120 = |cfg: &str| {
        st.as_ref()
            .is_some_and(|s| s[cfg]["ports"][key]["access_vlan"] == 120)
    };
    match case.after {
        After::Applied => {
            assert!(in_120("running") && in_120("saved"), "{what}: not applied");
            assert_eq!(v["changed"], true, "{what}: {v}");
        }
        After::NotApplied => {
            assert!(
                !in_120("running") && !in_120("saved"),
                "{what}: applied although the run failed: {:?}",
                st.as_ref().map(|s| &s["running"]["ports"][key])
            );
            if case.platform == "juniper" {
                // Nothing half-done left in a shared candidate for the next session.
                let pending = st.as_ref().map(|s| &s["pending"]);
                assert!(
                    pending.is_none_or(|p| p.is_null() || p["ports"][key]["access_vlan"] != 120),
                    "{what}: change left pending: {pending:?}"
                );
            }
        }
        After::RunningNotSaved => {
            assert!(
                in_120("running") && !in_120("saved"),
                "{what}: {:?}",
                st.as_ref()
                    .map(|s| (&s["running"]["ports"][key], &s["saved"]["ports"][key]))
            );
        }
        After::Untouched => {
            assert_eq!(
                sessions_total(lab),
                sessions_before,
                "{what}: the device was reached"
            );
            assert!(!in_120("running"), "{what}");
        }
    }
}

/// The helper above must see a lock Mercury would see: Mercury's own lock and `flock(1)`
/// exclude each other.
#[test]
fn the_lock_helper_blocks_mercury_itself() {
    let lab = Lab::new(&[]);
    let holder = hold_lock(&lab);
    let lock = lab.path(&format!("locks/{DEVICE}.lock"));
    let f = OpenOptions::new()
        .write(true)
        .open(Path::new(&lock))
        .unwrap();
    assert!(f.try_lock().is_err());
    drop(holder);
    assert!(f.try_lock().is_ok());
}
