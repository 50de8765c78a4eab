//! A third-party client against the simulator: netmiko (the library networking-generic-switch
//! is built on) configures the Cisco IOS, Arista EOS and Junos flavours of `mercury-sim`
//! through a real OpenSSH sshd, and the simulator's state shows the change — evidence that
//! the simulated prompts, paging/width confirmations, config modes, save and commit look
//! enough like the vendors' for a client written against real switches (issue 3).
//!
//! netmiko lives in a virtualenv made by `scripts/netmiko-venv` (scripts/test runs it);
//! `MERCURY_NETMIKO_PYTHON` names another interpreter. Without one (or without root/sshd)
//! the test is skipped with a message — under CI (`CI` set) that is a failure instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::sshd::SshdOptions;
use common::Lab;
use serde_json::Value;

/// The python with netmiko installed, or `None` (skip) outside CI.
fn netmiko_python() -> Option<PathBuf> {
    let candidate = std::env::var_os("MERCURY_NETMIKO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
            target.join("netmiko-venv/bin/python")
        });
    let works = Command::new(&candidate)
        .args(["-c", "import netmiko"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if works {
        return Some(candidate);
    }
    let why = format!(
        "{} cannot import netmiko (run scripts/netmiko-venv)",
        candidate.display()
    );
    assert!(std::env::var_os("CI").is_none(), "netmiko test: {why}");
    eprintln!("SKIPPED: {why}");
    None
}

/// Runs the netmiko script against `platform` behind its own sshd and returns netmiko's
/// outputs and the lab (for the simulator's state).
fn configure(
    python: &PathBuf,
    platform: &str,
    device_type: &str,
    iface: &str,
    secret: Option<&str>,
) -> (Value, Lab) {
    let lab = Lab::new(&[]);
    let mut sim_extra = vec![];
    if let Some(s) = secret {
        sim_extra.extend(["--enable-secret", s]);
    }
    let sshd = lab.sshd_for("leaf1", platform, &sim_extra, SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/netmiko_configure.py");
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .arg(device_type)
        .arg(sshd.port.to_string())
        .arg(&key)
        .arg(iface)
        .arg("120");
    if let Some(s) = secret {
        cmd.arg(s);
    }
    let out = cmd.output().expect("run python");
    assert!(
        out.status.success(),
        "netmiko against {platform} failed ({}):\n{}\nsshd log:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        sshd.log()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "netmiko script output is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (v, lab)
}

/// The port is an access port in VLAN 120 in both the running and the saved configuration,
/// and VLAN 120 exists with the name netmiko gave it.
fn assert_configured(lab: &Lab, port: &str, vlan_name_key: &str) {
    let state = lab.state("leaf1");
    for cfg in ["running", "saved"] {
        let p = &state[cfg]["ports"][port];
        assert_eq!(
            (p["mode"].as_str(), p["access_vlan"].as_u64()),
            (Some("access"), Some(120)),
            "{cfg} {port}: {p}"
        );
        assert_eq!(
            state[cfg]["vlans"]["120"]["name"], vlan_name_key,
            "{cfg} vlans: {}",
            state[cfg]["vlans"]
        );
    }
}

#[test]
fn netmiko_configures_cisco_ios_through_sshd() {
    require_sshd!();
    let Some(python) = netmiko_python() else {
        return;
    };
    let (v, lab) = configure(
        &python,
        "cisco_ios",
        "cisco_ios",
        "GigabitEthernet1/0/5",
        None,
    );
    assert_eq!(v["base_prompt"], "leaf1", "{v}");
    assert!(v["save"].as_str().unwrap().contains("[OK]"), "{v}");
    assert!(v["show"].as_str().unwrap().contains("tenant-120"), "{v}");
    assert_configured(&lab, "GigabitEthernet1/0/5", "tenant-120");
}

#[test]
fn netmiko_enters_enable_mode_with_the_secret_on_cisco_ios() {
    require_sshd!();
    let Some(python) = netmiko_python() else {
        return;
    };
    let (v, lab) = configure(
        &python,
        "cisco_ios",
        "cisco_ios",
        "GigabitEthernet1/0/7",
        Some("En4ble-s3cret"),
    );
    assert_eq!(v["enable_prompt"], "leaf1#", "{v}");
    assert_configured(&lab, "GigabitEthernet1/0/7", "tenant-120");
}

#[test]
fn netmiko_configures_arista_eos_through_sshd() {
    require_sshd!();
    let Some(python) = netmiko_python() else {
        return;
    };
    let (v, lab) = configure(&python, "arista_eos", "arista_eos", "Ethernet5", None);
    assert_eq!(v["base_prompt"], "leaf1", "{v}");
    assert!(
        v["config"].as_str().unwrap().contains("(config-if-Et5)#"),
        "{v}"
    );
    assert!(v["show"].as_str().unwrap().contains("tenant-120"), "{v}");
    assert_configured(&lab, "Ethernet5", "tenant-120");
}

#[test]
fn netmiko_configures_junos_through_sshd_and_commits() {
    require_sshd!();
    let Some(python) = netmiko_python() else {
        return;
    };
    let (v, lab) = configure(&python, "juniper", "juniper_junos", "ge-0/0/5", None);
    assert_eq!(v["base_prompt"], "admin@leaf1", "{v}");
    assert!(
        v["commit"].as_str().unwrap().contains("commit complete"),
        "{v}"
    );
    assert!(v["show"].as_str().unwrap().contains("ge-0/0/5"), "{v}");
    assert_eq!(v["final_prompt"], "admin@leaf1>", "{v}");
    assert_configured(&lab, "ge-0/0/5", "tenant-120");
    // Committed: nothing left in the shared candidate.
    let state = lab.state("leaf1");
    assert!(
        state["pending"].is_null() || state["pending"] == state["running"],
        "{}",
        state["pending"]
    );
}
