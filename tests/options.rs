//! Issue 13 item 6: on exec platforms every value is its own argument, but an argument that
//! starts with `-` is an option to the tool. A description `--help` reached NVUE as `nv set
//! interface swp5 description --help` — which prints help and exits 0, so Mercury reported a
//! change that never happened. Per platform (`end_of_options` in the catalog) such a value
//! now goes after the tool's `--`, or is refused before any device contact.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};

fn update(lab: &Lab, port: &str, description: &str) -> common::Ran {
    let json = serde_json::json!({
        "op": "update_port", "device": "leaf", "port": port, "mode": "access",
        "native_vlan": 120, "description": description, "reason": "hostile"
    });
    lab.mercury(["run"]).stdin(&json.to_string()).run()
}

fn setup(platform: &str) -> Lab {
    let lab = Lab::new(&[SimDevice::new("leaf", platform)]);
    for v in ["10", "120"] {
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
    lab
}

/// The simulator's tools behave like the real ones on a help option: help, exit 0, nothing
/// changed — which is what made the old plan's "success" false.
#[test]
fn simulated_tools_print_help_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let exec = |platform: &str, state: &str, cmd: &str| {
        std::process::Command::new(common::sim_bin())
            .args(["--platform", platform, "--state"])
            .arg(dir.path().join(state))
            .arg(cmd)
            .output()
            .unwrap()
    };
    let out = exec(
        "cumulus_nvue",
        "nvue.json",
        "nv set interface swp5 description --help",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
    let pending = exec("cumulus_nvue", "nvue.json", "nv config diff");
    assert!(
        !String::from_utf8_lossy(&pending.stdout).contains("description"),
        "help changed the candidate"
    );
    let out = exec(
        "sonic",
        "sonic.json",
        "sudo config vlan member add 120 Ethernet20 --help",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
    // Without sudo, sonic-utilities' `config` refuses to run at all.
    let out = exec("sonic", "sonic.json", "config vlan add 120");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Root privileges are required"));
}

/// NVUE and NCLU have no end-of-options word Mercury relies on: the value is refused (65),
/// nothing is sent, the port is unchanged.
#[test]
fn option_like_values_are_refused_where_the_tool_has_no_separator() {
    for (platform, port) in [("cumulus_nvue", "swp5"), ("cumulus", "swp5")] {
        let lab = setup(platform);
        let sent = lab.transcript("leaf").len();
        for d in ["--help", "-h", "-x foo"] {
            let v = update(&lab, port, d).expect(65);
            assert!(
                v["msg"].as_str().unwrap().contains("read as an option"),
                "{platform} {d}: {v}"
            );
        }
        assert_eq!(lab.transcript("leaf").len(), sent, "{platform}: sent");
        assert_eq!(lab.port("leaf", port)["description"], "", "{platform}");
        // An ordinary description still works.
        update(&lab, port, "node 7 - nic 1").expect(0);
    }
}

/// SONiC's tools end their options at `--`: the description `--help` is set as text.
#[test]
fn option_like_values_follow_the_separator_where_the_tool_has_one() {
    for platform in ["sonic", "dell_enterprise_sonic"] {
        let lab = setup(platform);
        let r = update(&lab, "Ethernet20", "--help");
        let v = r.expect(0);
        assert!(
            r.inputs().iter().any(|l| l
                .contains("sonic-db-cli -- CONFIG_DB hset 'PORT|Ethernet20' description --help")),
            "{platform}: {v}"
        );
        let port = lab.port("leaf", "Ethernet20");
        assert_eq!(port["description"], "--help", "{platform}: {port}");
        assert_eq!(port["access_vlan"], 120, "{platform}: {port}");
    }
}
