//! The bundled lab (`examples/lab/mercury.toml`, what `scripts/lab` runs) works for every
//! device in it: each gets a tenant VLAN and a port attached, and the simulator agrees. The
//! quick-start scripts themselves run too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{mercury, set_mode};

/// (device, example port), as listed in the lab config's header.
fn lab_ports() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lab/mercury.toml"),
    )
    .unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with("# Ports to try"))
        .skip(1)
        .take_while(|l| l.starts_with("#   "))
        .map(|l| {
            let f: Vec<&str> = l.trim_start_matches('#').split_whitespace().collect();
            (f[0].to_string(), f[2].to_string())
        })
        .collect()
}

#[test]
fn every_lab_device_takes_a_vlan_and_an_attach() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mercury.toml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lab/mercury.toml"),
        &config,
    )
    .unwrap();
    set_mode(&config, 0o600);
    let sim_dir = common::sim_bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        sim_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ports = lab_ports();
    assert!(ports.len() >= 10, "the lab lists {} devices", ports.len());
    let cfg = config.to_str().unwrap();
    for (device, port) in &ports {
        for args in [
            vec![
                "--config",
                cfg,
                "add-network",
                "--device",
                device,
                "--vlan",
                "10",
                "--reason",
                "lab",
            ],
            vec![
                "--config",
                cfg,
                "add-network",
                "--device",
                device,
                "--vlan",
                "120",
                "--reason",
                "lab",
            ],
            vec![
                "--config",
                cfg,
                "attach-port",
                "--device",
                device,
                "--port",
                port,
                "--vlan",
                "120",
                "--reason",
                "lab",
            ],
        ] {
            let r = mercury(&args).env("PATH", &path).run();
            assert_eq!(r.code, 0, "{device} {args:?}: {}", r.stdout);
        }
        let state = dir.path().join(format!("state/{device}.json"));
        let out = std::process::Command::new(common::sim_bin())
            .args(["show", "--state"])
            .arg(&state)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let attached = v["running"]["ports"]
            .as_object()
            .unwrap()
            .values()
            .any(|p| p["access_vlan"] == 120 || p["native_vlan"] == 120);
        assert!(
            attached,
            "{device}: no port in VLAN 120: {}",
            v["running"]["ports"]
        );
    }
}

/// The lab's DPU: plug-port on dpu-1 (the simulator's ovs-vsctl) adds the VLAN to its uplink
/// on leaf-ios beside the VLAN another host uses, and plugs the representor; unplug-port
/// undoes both.
#[test]
fn the_lab_dpu_plugs_through_its_uplink_on_leaf_ios() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mercury.toml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lab/mercury.toml"),
        &config,
    )
    .unwrap();
    set_mode(&config, 0o600);
    let sim_dir = common::sim_bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        sim_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cfg = config.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--config", cfg];
        all.extend_from_slice(args);
        let r = mercury(&all).env("PATH", &path).run();
        assert_eq!(r.code, 0, "{args:?}: {}", r.stdout);
        serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap()
    };
    let state = |device: &str| {
        let out = std::process::Command::new(common::sim_bin())
            .args(["show", "--state"])
            .arg(dir.path().join(format!("state/{device}.json")))
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    const UPLINK: &str = "GigabitEthernet1/0/6";
    for vlan in ["110", "120"] {
        run(&[
            "add-network",
            "--device",
            "leaf-ios",
            "--vlan",
            vlan,
            "--reason",
            "lab",
        ]);
    }
    run(&[
        "update-port",
        "--device",
        "leaf-ios",
        "--port",
        UPLINK,
        "--mode",
        "trunk",
        "--allowed-vlans",
        "110",
        "--reason",
        "lab",
    ]);
    let v = run(&[
        "plug-port",
        "--device",
        "dpu-1",
        "--port",
        "pf0vf1",
        "--vif-id",
        "vif-1",
        "--vlan",
        "120",
        "--reason",
        "lab",
    ]);
    assert_eq!(v["data"]["hops"].as_array().unwrap().len(), 2, "{v}");
    let port = &state("leaf-ios")["running"]["ports"][UPLINK];
    assert_eq!(port["mode"], "trunk", "{port}");
    assert_eq!(
        port["allowed_vlans"],
        serde_json::json!([110, 120]),
        "{port}"
    );
    let rep = &state("dpu-1")["running"]["ports"]["pf0vf1"]["ovs"];
    assert_eq!(rep["bridge"], "br-int", "{rep}");
    assert_eq!(rep["tag"], 120, "{rep}");
    assert_eq!(rep["iface_external_ids"]["iface-id"], "vif-1", "{rep}");
    assert_eq!(rep["iface_external_ids"]["plugged-by"], "mercury", "{rep}");
    run(&[
        "unplug-port",
        "--device",
        "dpu-1",
        "--port",
        "pf0vf1",
        "--reason",
        "lab",
    ]);
    let port = &state("leaf-ios")["running"]["ports"][UPLINK];
    assert_eq!(port["allowed_vlans"], serde_json::json!([110]), "{port}");
    assert!(state("dpu-1")["running"]["ports"].get("pf0vf1").is_none());
}

fn script(name: &str) -> common::Ran {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(root.join("scripts").join(name))
        .env("LAB_NO_BUILD", "1")
        .env(
            "CARGO_TARGET_DIR",
            common::sim_bin().parent().unwrap().parent().unwrap(),
        )
        .output()
        .unwrap();
    common::Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The README's first command: the quick start prints a successful attach-port result and
/// the switch's own view of the port in VLAN 120.
#[test]
fn the_quick_start_attaches_a_port_on_the_lab() {
    let r = script("lab");
    let v = r.expect(0);
    assert_eq!(v["op"], "attach_port");
    assert_eq!(v["changed"], true);
    assert!(
        r.stderr.contains("switchport access vlan 120"),
        "{}",
        r.stderr
    );
}

/// The sshd variant of the lab, when this machine can start sshd (root + openssh-server).
#[test]
fn the_lab_through_a_real_sshd() {
    if !common::sshd::available() {
        return;
    }
    let r = script("lab-ssh");
    let v = r.expect(0);
    assert_eq!(v["device"], "leaf-ssh");
    assert!(
        r.stderr.contains("switchport access vlan 120"),
        "{}",
        r.stderr
    );
}
