//! Port names as the devices and Ironic's LLDP data spell them: every name is turned into
//! the platform's canonical one before policy, lock, audit and rendering (issue 13 item 3,
//! issue 15 items 1 and 7), over every entry point, with the simulator's state asserted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{mercury, set_mode, Lab, SimDevice};
use serde_json::Value;

/// The bundled lab (examples/lab/mercury.toml) in a temporary directory, plus a caller for
/// serve-ssh and an HTTP user for serve-jsonrpc that may use leaf-eos.
struct BundledLab {
    dir: tempfile::TempDir,
    path: String,
}

impl BundledLab {
    fn new() -> BundledLab {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("mercury.toml");
        let mut text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lab/mercury.toml"),
        )
        .unwrap();
        text.push_str(
            "\n[callers.tester]\ndevices = [\"leaf-eos\"]\nallowed_vlans = [\"100-199\"]\n",
        );
        std::fs::write(&config, text).unwrap();
        set_mode(&config, 0o600);
        // bcrypt cost 4 of "secret".
        let hash = "$2y$04$g89FzS2kk46fDeP0k33vLOPiZH8Rt2WvMvE8ZBT.B4tgzIdUIrQ2W";
        std::fs::write(dir.path().join("htpasswd"), format!("tester:{hash}\n")).unwrap();
        set_mode(&dir.path().join("htpasswd"), 0o600);
        let sim_dir = common::sim_bin().parent().unwrap().to_path_buf();
        let path = format!(
            "{}:{}",
            sim_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        BundledLab { dir, path }
    }

    fn config(&self) -> String {
        self.dir.path().join("mercury.toml").display().to_string()
    }

    fn run(&self, args: &[&str]) -> common::Run {
        let mut all = vec!["--config".to_string(), self.config()];
        all.extend(args.iter().map(|s| s.to_string()));
        mercury(all).env("PATH", &self.path)
    }

    fn state(&self, device: &str) -> Value {
        let out = Command::new(common::sim_bin())
            .args(["show", "--state"])
            .arg(self.dir.path().join(format!("state/{device}.json")))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    fn transcript(&self, device: &str) -> usize {
        std::fs::read_to_string(self.dir.path().join(format!("state/{device}.transcript")))
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// One `update_port` call through `serve-jsonrpc --inetd`, as Ironic sends it.
    fn jsonrpc_update_port(&self, port: &str) -> String {
        let body = format!(
            r#"{{"jsonrpc": "2.0", "method": "update_port", "params": {{"switch_id": "leaf-eos", "port_name": "{port}", "description": "d", "mode": "access", "native_vlan": 120, "allowed_vlans": null, "lag_name": null, "default_vlan": null, "context": {{}}, "rpc.version": "1.0"}}, "id": "req-1"}}"#
        );
        let request = format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic dGVzdGVyOnNlY3JldA==\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let mut child = Command::new(common::mercury_bin())
            .args([
                "--config",
                &self.config(),
                "serve-jsonrpc",
                "--inetd",
                "--htpasswd",
            ])
            .arg(self.dir.path().join("htpasswd"))
            .env("PATH", &self.path)
            .env_remove("SSH_CONNECTION")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(request.as_bytes())
            .unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child.wait().unwrap();
        out
    }
}

/// Issue 13 item 3: on the lab's EOS `Ethernet48` is denied (`denied_ports`), and `Et48`
/// and `ethernet48` — names EOS takes for the same port — were applied. Every spelling is
/// now the canonical `Ethernet48` before policy: refused (77) over argv, `run`, `serve-ssh`
/// and `serve-jsonrpc`, nothing sent, the port unchanged.
#[test]
fn denied_port_by_abbreviation_or_case_is_refused_on_every_entry_point() {
    let lab = BundledLab::new();
    lab.run(&[
        "add-network",
        "--device",
        "leaf-eos",
        "--vlan",
        "120",
        "--reason",
        "setup",
    ])
    .run()
    .expect(0);
    let sent = lab.transcript("leaf-eos");
    let port_before = lab.state("leaf-eos")["running"]["ports"]["Ethernet48"].clone();
    assert!(port_before.is_object(), "the lab's EOS has an Ethernet48");
    for port in ["Ethernet48", "Et48", "ethernet48", "ET48", "Eth48"] {
        // argv
        let v = lab
            .run(&[
                "attach-port",
                "--device",
                "leaf-eos",
                "--port",
                port,
                "--vlan",
                "120",
                "--reason",
                "hostile",
            ])
            .run()
            .expect(77);
        assert_eq!(v["error_kind"], "not_permitted", "{port}: {v}");
        assert!(
            v["msg"].as_str().unwrap().contains("denied_ports"),
            "{port}: {v}"
        );
        // run (JSON on stdin), also as an Ironic link
        for json in [
            format!(
                r#"{{"op":"attach_port","device":"leaf-eos","port":"{port}","vlan":120,"reason":"hostile"}}"#
            ),
            format!(
                r#"{{"op":"attach_port","local_link_connection":{{"switch_id":"02:00:00:00:01:04","port_id":"{port}"}},"vlan":120,"reason":"hostile"}}"#
            ),
        ] {
            lab.run(&["run"]).stdin(&json).run().expect(77);
        }
        // serve-ssh, as the conductor's restricted key
        let cmd =
            format!("attach-port --device leaf-eos --port {port} --vlan 120 --reason hostile");
        lab.run(&["serve-ssh", "--caller", "tester"])
            .env("SSH_ORIGINAL_COMMAND", &cmd)
            .run()
            .expect(77);
        // serve-jsonrpc, as stock Ironic
        let http = lab.jsonrpc_update_port(port);
        assert!(http.starts_with("HTTP/1.1 200"), "{port}: {http}");
        assert!(http.contains("denied by"), "{port}: {http}");
    }
    assert_eq!(
        lab.transcript("leaf-eos"),
        sent,
        "a denied port reached EOS"
    );
    assert_eq!(
        lab.state("leaf-eos")["running"]["ports"]["Ethernet48"],
        port_before
    );
    // The audit names the port canonically whatever the caller typed.
    let audit = std::fs::read_to_string(lab.dir.path().join("state/audit.log")).unwrap();
    assert!(!audit.contains("\"Et48\""), "{audit}");
}

/// A name EOS does not take is refused before policy (65), not denied or applied.
#[test]
fn a_name_the_platform_does_not_take_is_refused() {
    let lab = Lab::new(&[SimDevice::new("leaf", "arista_eos")]);
    for port in ["Et 48", "Etx48", "Gi1/0/1", "Ethernet"] {
        let v = lab.attach("leaf", port, "120").run().expect(65);
        assert_eq!(v["error_kind"], "invalid_request", "{port}: {v}");
    }
    // Two spellings of one port in one request are one port twice.
    let v = lab
        .mercury(["run"])
        .stdin(r#"{"op":"attach_port","device":"leaf","ports":["Et5","ethernet5"],"vlan":120,"reason":"r"}"#)
        .run()
        .expect(65);
    assert!(v["msg"].as_str().unwrap().contains("same port"), "{v}");
    assert!(lab.transcript("leaf").is_empty());
}

/// Issue 15 item 1: OS9, RGOS and SMIS advertise (and print) their interfaces with one
/// space between type and number, and Ironic copies the LLDP port id verbatim. Such a
/// `local_link_connection` — and the same name over argv and serve-ssh — configures the
/// port, on a simulator that takes the space as the real CLIs do.
#[test]
fn lldp_names_with_a_space_work_end_to_end() {
    for (platform, lldp, key) in [
        (
            "dell_force10",
            "TenGigabitEthernet 1/5",
            "TenGigabitEthernet1/5",
        ),
        ("ruijie", "GigabitEthernet 0/5", "GigabitEthernet0/5"),
        ("supermicro_smis", "Gi 0/5", "Gi0/5"),
    ] {
        let lab = Lab::new(&[SimDevice {
            extra: "mac = \"02:00:00:00:09:01\"",
            ..SimDevice::new("leaf", platform)
        }]);
        lab.append_config("\n[callers.conductor]\ndevices = [\"leaf\"]\n");
        for v in ["10", "120", "130"] {
            lab.mercury([
                "add-network",
                "--device",
                "leaf",
                "--vlan",
                v,
                "--reason",
                "setup",
            ])
            .run()
            .expect(0);
        }
        let json = format!(
            r#"{{"op":"attach_port","local_link_connection":{{"switch_id":"02:00:00:00:09:01","port_id":"{lldp}"}},"vlan":120,"reason":"deploy"}}"#
        );
        let v = lab.mercury(["run"]).stdin(&json).run().expect(0);
        assert_eq!(v["changed"], true, "{platform}: {v}");
        let port = lab.port("leaf", key);
        assert_eq!(port["access_vlan"], 120, "{platform}: {port}");
        let audit = lab.audit();
        let started = audit
            .iter()
            .rev()
            .find(|r| r["event"] == "started")
            .unwrap();
        assert_eq!(started["what"]["ports"][0], lldp, "{platform}: canonical");

        // serve-ssh with the name quoted, as `ssh executor attach-port --port 'Gi 0/5'`.
        let cmd = format!("attach-port --device leaf --port '{lldp}' --vlan 130 --reason deploy");
        lab.mercury(["serve-ssh", "--caller", "conductor"])
            .env("SSH_ORIGINAL_COMMAND", &cmd)
            .run()
            .expect(0);
        assert_eq!(lab.port("leaf", key)["access_vlan"], 130, "{platform}");

        // Two spaces, or a space elsewhere, stay refused.
        for bad in [
            lldp.replace(' ', "  "),
            format!("{lldp} "),
            lldp.replace('/', " /"),
        ] {
            lab.attach("leaf", &bad, "120").run().expect(65);
        }
    }
}

/// Catalyst 9000 multigigabit and 25/50/100G names, with the abbreviations IOS prints.
#[test]
fn current_ios_interface_types_are_accepted_and_rendered_in_full() {
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    for (typed, full) in [
        ("Tw1/0/1", "TwoGigabitEthernet1/0/1"),
        ("Fi1/0/2", "FiveGigabitEthernet1/0/2"),
        ("Twe1/1/1", "TwentyFiveGigE1/1/1"),
        ("fif1/1/2", "FiftyGigE1/1/2"),
        ("Hu1/0/49", "HundredGigE1/0/49"),
        ("Fo1/1/1", "FortyGigabitEthernet1/1/1"),
    ] {
        let r = lab
            .mercury([
                "--dry-run",
                "attach-port",
                "--device",
                "leaf",
                "--port",
                typed,
                "--vlan",
                "120",
                "--reason",
                "r",
            ])
            .run();
        r.expect(0);
        assert!(
            r.inputs().contains(&format!("interface {full}")),
            "{typed}: {:?}",
            r.inputs()
        );
    }
}
