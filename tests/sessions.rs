//! The device's count of Mercury's sessions, behind a real OpenSSH sshd: a switch with
//! few VTY lines refuses a login while it still counts an earlier session, so a lock slot
//! may only pass to the next session once the device has ended the previous one.
//!
//! The device here counts a session from the TCP accept until the server has closed the
//! connection *and* the CLI process is gone, observed by the kernel (a counting proxy in
//! front of sshd, and a socket every CLI inherits; `common::counting`), not by the
//! simulator's own bookkeeping; and it frees a session only 5 s after its CLI has ended
//! (longer than the 2 s, plus a 0.5 s goodbye, that Mercury used to wait for the server's
//! close before releasing the lock), so a lock handed on before the device has ended the session shows up as two
//! sessions at every hand-over, not only when the timing is unlucky (on a loaded machine). A burst of 64 requests and then at once a burst of 256, all
//! on one switch with `max_sessions = 1`, must never have two sessions open at once — the
//! finding of issue 18, where the lock was released while the CLI of the session that held
//! it was still running. Every request must succeed and be applied exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::counting::CountingDevice;
use common::sshd::{Sshd, SshdOptions};
use common::Lab;

/// How long the device takes to free a session after its CLI has exited.
const TEARDOWN_MS: u32 = 5000;

/// Switch ports on a stack of seven 48-port members: 336 distinct ports.
fn port(j: usize) -> (String, String) {
    let (member, n) = (j / 48 + 1, j % 48 + 1);
    (
        format!("Gi{member}/0/{n}"),
        format!("GigabitEthernet{member}/0/{n}"),
    )
}

fn vlan(i: usize) -> usize {
    100 + i % 50
}

/// The simulated switch's state file before any client: VLANs 100-149 exist, and the
/// stack's ports (the simulator serves every port its state file holds).
fn seed(lab: &Lab, argv: &[String]) {
    let mut script = String::from("configure terminal\n");
    for v in 100..150 {
        script.push_str(&format!("vlan {v}\nexit\n"));
    }
    script.push_str("end\nexit\n");
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("mercury-sim");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let path = lab.path("leaf.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for cfg in ["running", "saved"] {
        let ports = state[cfg]["ports"].as_object_mut().unwrap();
        let template = ports["GigabitEthernet1/0/1"].clone();
        for j in 0..336 {
            ports.entry(port(j).1).or_insert_with(|| template.clone());
        }
    }
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
}

/// Starts `range` attach-port requests at once and waits for all; returns the failures.
fn burst(lab: &Lab, range: std::ops::Range<usize>) -> Vec<String> {
    let children: Vec<_> = range
        .clone()
        .map(|i| {
            lab.mercury([
                "attach-port",
                "--device",
                "leaf",
                "--port",
                &port(i).0,
                "--vlan",
                &vlan(i).to_string(),
                "--reason",
                "sessions",
                "--request-id",
                &format!("s-{i}"),
            ])
            .spawn()
        })
        .collect();
    let mut failures = Vec::new();
    for (i, c) in range.zip(children) {
        let r = common::finish(c);
        if r.code != 0 {
            failures.push(format!("s-{i}: exit {}: {}", r.code, r.stdout.trim()));
        } else {
            assert_eq!(r.json()["request_id"], format!("s-{i}"));
        }
    }
    failures
}

#[test]
fn bursts_of_64_then_256_behind_sshd_never_give_the_device_two_sessions() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let device = CountingDevice::start();
    let sim = lab.sim_argv("leaf", "cisco_ios", &[]);
    seed(&lab, &sim);
    let sshd = Sshd::start(&SshdOptions {
        force_command: Some(device.force_command(&sim, TEARDOWN_MS)),
        ..SshdOptions::default()
    });
    device.front(sshd.port);
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.append_config(&format!(
        "\n[devices.leaf]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {}\n\
         username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\nmax_sessions = 1\n\
         lock_timeout = 300\ncommand_timeout = 30\nrequest_timeout = 300\n",
        device.port,
        key.display(),
        sshd.fingerprint
    ));

    let first = burst(&lab, 0..64);
    let after_first = (device.max_open(), device.accepted());
    let second = burst(&lab, 64..320);
    let failures: Vec<String> = first.into_iter().chain(second).collect();
    assert!(
        failures.is_empty(),
        "{} of 320 failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!(
        "64 then 256 requests: {} TCP sessions ({} after the first burst), {} CLI processes, \
         most open at once {} (first burst {})",
        device.accepted(),
        after_first.1,
        device.clis(),
        device.max_open(),
        after_first.0
    );
    assert!(
        device.max_open() <= 1,
        "the device counted {} sessions at once with max_sessions = 1:\n{}",
        device.max_open(),
        device.timeline()
    );
    assert!(device.accepted() >= 1 && device.clis() == device.accepted());

    // The simulator's own count agrees, and every request was applied exactly once.
    let state = lab.settled_state("leaf");
    assert_eq!(state["sessions"]["max_seen"], 1, "{}", state["sessions"]);
    let transcript = lab.transcript("leaf");
    for i in 0..320 {
        let (_, long) = port(i);
        for cfg in ["running", "saved"] {
            let p = &state[cfg]["ports"][&long];
            assert_eq!(
                (p["mode"].as_str(), p["access_vlan"].as_u64()),
                (Some("access"), Some(vlan(i) as u64)),
                "{cfg} {long} (request s-{i}): {p}"
            );
        }
        let sent = transcript
            .iter()
            .filter(|l| **l == format!("interface {long}"))
            .count();
        assert_eq!(
            sent, 1,
            "request s-{i} sent its interface line {sent} times"
        );
    }
}
