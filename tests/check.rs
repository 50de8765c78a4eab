//! `mercury check --connect`: every device reached, logged in, its prompt and mode worked
//! out and its idle VLAN read, one row per device, and nothing configured — over the
//! command transport and over real SSH (host key, login). The negative cases each fail the
//! way a real run would, with the same exit code, and name the fix.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::sshd::SshdOptions;
use common::{Lab, SimDevice};
use serde_json::Value;

fn row<'a>(v: &'a Value, device: &str) -> &'a Value {
    v["data"]["connect"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["device"] == device)
        .unwrap_or_else(|| panic!("no row for {device}: {v}"))
}

#[test]
fn connect_reads_every_device_and_configures_nothing() {
    let lab = Lab::new(&[
        SimDevice::new("leaf-ios", "cisco_ios"),
        SimDevice::new("leaf-junos", "juniper"),
        SimDevice::new("leaf-vrp", "huawei"),
        SimDevice::new("leaf-sonic", "sonic"),
        SimDevice::new("leaf-nvue", "cumulus_nvue"),
    ]);
    for d in ["leaf-ios", "leaf-junos", "leaf-vrp", "leaf-sonic"] {
        lab.mercury([
            "add-network",
            "--device",
            d,
            "--vlan",
            "10",
            "--reason",
            "t",
        ])
        .run()
        .expect(0);
    }
    let devices = ["leaf-ios", "leaf-junos", "leaf-vrp", "leaf-sonic"];
    let before: Vec<(usize, usize)> = devices
        .iter()
        .map(|d| {
            (
                lab.transcript(d).len(),
                lab.state(d)["running"]["vlans"].as_object().unwrap().len(),
            )
        })
        .collect();
    let v = lab.mercury(["check", "--connect"]).run().expect(0);
    assert_eq!(v["data"]["connect"].as_array().unwrap().len(), 5);
    for d in ["leaf-ios", "leaf-junos", "leaf-vrp", "leaf-sonic"] {
        let r = row(&v, d);
        assert_eq!(r["ok"], true, "{r}");
        assert!(
            r["detail"]
                .as_str()
                .unwrap()
                .contains("idle VLAN 10 exists"),
            "{r}"
        );
    }
    assert!(row(&v, "leaf-ios")["detail"]
        .as_str()
        .unwrap()
        .contains("prompt in privileged mode"));
    assert!(row(&v, "leaf-nvue")["detail"]
        .as_str()
        .unwrap()
        .contains("not read"));
    // Nothing configured: only setup and show lines reached the simulators, and their
    // VLANs are as they were.
    for (d, (lines_before, vlans_before)) in devices.iter().zip(before) {
        let new = lab.transcript(d)[lines_before..].to_vec();
        assert!(!new.is_empty(), "{d} was not contacted");
        for l in &new {
            assert!(
                ![
                    "conf",
                    "system-view",
                    "commit",
                    "set vlans",
                    "set interfaces",
                    "sudo",
                    "write",
                    "save",
                    "copy"
                ]
                .iter()
                .any(|w| l.starts_with(w)),
                "{d}: check sent {l:?} ({new:?})"
            );
        }
        assert_eq!(
            lab.state(d)["running"]["vlans"].as_object().unwrap().len(),
            vlans_before
        );
    }
    // --device narrows it; text output is a table.
    let r = lab
        .mercury([
            "--format",
            "text",
            "check",
            "--connect",
            "--device",
            "leaf-ios",
        ])
        .run();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("DEVICE"), "{}", r.stdout);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("leaf-ios") && l.contains(" ok ")),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("leaf-junos"), "{}", r.stdout);
}

#[test]
fn connect_negative_cases_fail_as_a_real_run_would() {
    let lab = Lab::new(&[
        SimDevice::new("leaf-ios", "cisco_ios"),
        SimDevice {
            sim_args: &["--fault", "no-prompt-after-login"],
            ..SimDevice::new("leaf-silent", "cisco_ios")
        },
    ]);
    lab.append_config(
        "\n[devices.leaf-gone]\nplatform = \"cisco_ios\"\ntransport = \"command\"\nargv = [\"/nonexistent/sim\"]\n",
    );
    // The idle VLAN 10 was never created on leaf-ios.
    let v = lab.mercury(["check", "--connect"]).run().expect(78);
    let r = row(&v, "leaf-ios");
    assert_eq!(r["ok"], false);
    assert!(
        r["detail"]
            .as_str()
            .unwrap()
            .contains("add-network --vlan 10"),
        "{r}"
    );
    assert_eq!(row(&v, "leaf-silent")["rc"], 75, "{v}");
    assert_eq!(row(&v, "leaf-gone")["rc"], 78, "{v}");
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .starts_with("3 of 3 devices failed"),
        "{v}"
    );
    // An unknown --device is the caller's mistake, with a suggestion.
    let v = lab
        .mercury(["check", "--connect", "--device", "leaf-l0s"])
        .run()
        .expect(65);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("did you mean leaf-ios?"),
        "{v}"
    );
    // Only the named device's failure counts.
    lab.mercury([
        "add-network",
        "--device",
        "leaf-ios",
        "--vlan",
        "10",
        "--reason",
        "t",
    ])
    .run()
    .expect(0);
    lab.mercury(["check", "--connect", "--device", "leaf-ios"])
        .run()
        .expect(0);
}

#[test]
fn connect_over_ssh_verifies_the_host_key_and_the_login() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    let stranger = lab.path("stranger");
    common::sshd::keygen(&stranger, "ed25519", "");
    let wrong = common::sshd::fingerprint_of(&stranger.with_extension("pub"));
    for (name, user, fp) in [
        ("leaf", "root", sshd.fingerprint.as_str()),
        ("leaf-wrong-key", "root", wrong.as_str()),
        ("leaf-wrong-user", "nobody-here", sshd.fingerprint.as_str()),
    ] {
        lab.add_ssh_device(
            name,
            "cisco_ios",
            &sshd,
            &format!(
                "username = \"{user}\"\nkey_file = \"{}\"\nhost_key = \"{fp}\"\n",
                key.display()
            ),
        );
    }
    lab.mercury([
        "add-network",
        "--device",
        "leaf",
        "--vlan",
        "10",
        "--reason",
        "t",
    ])
    .run()
    .expect(0);
    let v = lab.mercury(["check", "--connect"]).run().expect(77);
    let ok = row(&v, "leaf");
    assert_eq!(ok["ok"], true, "{ok}");
    let detail = ok["detail"].as_str().unwrap();
    assert!(detail.contains("host key verified, logged in"), "{detail}");
    assert!(detail.contains("idle VLAN 10 exists"), "{detail}");
    let bad = row(&v, "leaf-wrong-key");
    assert_eq!(bad["rc"], 77, "{bad}");
    assert!(
        bad["detail"].as_str().unwrap().contains("host key"),
        "{bad}"
    );
    assert_eq!(row(&v, "leaf-wrong-user")["rc"], 77);
    // Refused connection: 69.
    let port = common::sshd::free_port();
    lab.append_config(&format!(
        "\n[devices.leaf-down]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {port}\nusername = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\n",
        key.display(),
        sshd.fingerprint
    ));
    let v = lab
        .mercury(["check", "--connect", "--device", "leaf-down"])
        .run()
        .expect(69);
    assert!(row(&v, "leaf-down")["detail"]
        .as_str()
        .unwrap()
        .contains("check address, port"));
}
