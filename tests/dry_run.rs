//! `--dry-run` plans, snapshotted per platform and operation: the exact lines Mercury would
//! type, in order, including mode changes and save/commit. A change to a template, to the
//! composition rules or to the session's navigation shows up here as a diff to review.

mod common;

use common::{Lab, SimDevice};

const OPS: &[(&str, &[&str])] = &[
    (
        "attach_access",
        &["attach-port", "--port", "{port}", "--vlan", "120"],
    ),
    (
        "attach_trunk",
        &[
            "attach-port",
            "--port",
            "{port}",
            "--vlan",
            "120",
            "--mode",
            "trunk",
        ],
    ),
    (
        "detach_access",
        &["detach-port", "--port", "{port}", "--vlan", "120"],
    ),
    (
        "update_trunk",
        &[
            "update-port",
            "--port",
            "{port}",
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120,130-133",
            "--description",
            "node 7 nic 1",
            "--mtu",
            "9000",
        ],
    ),
    ("reset", &["reset-port", "--port", "{port}"]),
    (
        "add_network",
        &["add-network", "--vlan", "120", "--name", "tenant-a"],
    ),
    (
        "delete_network",
        &["delete-network", "--vlan", "120", "--name", "tenant-a"],
    ),
    (
        "update_lag",
        &[
            "update-lag",
            "--lag",
            "7",
            "--member",
            "{port}",
            "--member",
            "{port2}",
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120",
        ],
    ),
    (
        "delete_lag",
        &[
            "delete-lag",
            "--lag",
            "7",
            "--member",
            "{port}",
            "--member",
            "{port2}",
        ],
    ),
];

fn plans(platform: &str, port: &str, port2: &str) -> String {
    let lab = Lab::with_defaults(
        &[SimDevice {
            extra: "shut_unused_ports = true",
            ..SimDevice::new("leaf", platform)
        }],
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
    );
    let mut out = String::new();
    for (name, args) in OPS {
        let mut argv = vec!["--dry-run".to_string()];
        argv.extend(
            args.iter()
                .map(|a| a.replace("{port2}", port2).replace("{port}", port)),
        );
        argv.extend(["--device", "leaf", "--reason", "snapshot"].map(String::from));
        let r = lab.mercury(&argv).run();
        out.push_str(&format!("## {name}\n"));
        if r.code == 0 {
            for l in r.inputs() {
                out.push_str(&format!("{l}\n"));
            }
        } else {
            out.push_str(&format!(
                "rc {}: {}\n",
                r.code,
                r.json()["msg"].as_str().unwrap_or_default()
            ));
        }
        out.push('\n');
    }
    assert!(
        lab.transcript("leaf").is_empty(),
        "a dry run contacted the device"
    );
    out
}

#[test]
fn cisco_ios() {
    insta::assert_snapshot!(plans("cisco_ios", "Gi1/0/5", "Gi1/0/6"));
}

#[test]
fn juniper() {
    insta::assert_snapshot!(plans("juniper", "ge-0/0/5", "ge-0/0/6"));
}

#[test]
fn cumulus_nvue() {
    insta::assert_snapshot!(plans("cumulus_nvue", "swp5", "swp6"));
}
