#![allow(clippy::expect_used)]
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
    (
        "update_trunk_native_only",
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
        ],
    ),
    (
        "update_hybrid",
        &[
            "update-port",
            "--port",
            "{port}",
            "--mode",
            "hybrid",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120,130-133",
        ],
    ),
    (
        "detach_trunk",
        &[
            "detach-port",
            "--port",
            "{port}",
            "--vlan",
            "120",
            "--mode",
            "trunk",
        ],
    ),
    ("reset", &["reset-port", "--port", "{port}"]),
    (
        "reset_named_vlans",
        &[
            "reset-port",
            "--port",
            "{port}",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120,130",
        ],
    ),
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
            for w in r.json()["warnings"].as_array().into_iter().flatten() {
                out.push_str(&format!("# warning: {}\n", w.as_str().unwrap_or_default()));
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

/// One snapshot per platform: `(test name = platform, first port, second port)`, port
/// names as the platform (and the simulator's inventory) spells them.
/// Platforms that plug OVS representor ports (SmartNIC/DPU) are verified against a real
/// ovsdb-server by their own tests, not by these switch operations.
fn representors(catalog: &mercury::catalog::Catalog, name: &str) -> bool {
    catalog.get(name).is_ok_and(|p| p.supports("plug"))
}

macro_rules! platforms {
    ($($platform:ident: $port:expr, $port2:expr;)*) => {
        $(
            #[test]
            fn $platform() {
                let plans = plans(stringify!($platform), $port, $port2);
                insta::with_settings!({ omit_expression => true }, {
                    insta::assert_snapshot!(plans);
                });
            }
        )*

        /// Every catalog platform has a snapshot here.
        #[test]
        fn every_platform_is_snapshotted() {
            let tested = [$(stringify!($platform)),*];
            let catalog = mercury::catalog::Catalog::builtin().expect("built-in catalog");
            let missing: Vec<&str> = catalog
                .names()
                .filter(|n| !tested.contains(n) && !representors(&catalog, n))
                .collect();
            assert!(missing.is_empty(), "no dry-run snapshot for {missing:?}");
        }
    };
}

platforms! {
    arista_eos: "Ethernet5", "Ethernet6";
    aruba_aoscx: "1/1/5", "1/1/6";
    brocade_fastiron: "ethernet1/1/5", "ethernet1/1/6";
    cisco_ios: "Gi1/0/5", "Gi1/0/6";
    cisco_nxos: "Ethernet1/5", "Ethernet1/6";
    cisco_s300: "GigabitEthernet1/0/5", "GigabitEthernet1/0/6";
    cumulus: "swp5", "swp6";
    cumulus_nvue: "swp5", "swp6";
    dell_enterprise_sonic: "Ethernet20", "Ethernet24";
    dell_force10: "TenGigabitEthernet1/5", "TenGigabitEthernet1/6";
    dell_os10: "ethernet1/1/5", "ethernet1/1/6";
    dell_powerconnect: "Gi1/0/5", "Gi1/0/6";
    hpe_comware: "GigabitEthernet1/0/5", "GigabitEthernet1/0/6";
    huawei: "GigabitEthernet0/0/5", "GigabitEthernet0/0/6";
    huawei_vrpv8: "GE1/0/5", "GE1/0/6";
    juniper: "ge-0/0/5", "ge-0/0/6";
    mellanox_mlnxos: "Eth1/5", "Eth1/6";
    nokia_srl: "ethernet-1/5", "ethernet-1/6";
    ovs_linux: "eth5", "eth6";
    pluribus: "5", "6";
    ruijie: "GigabitEthernet0/5", "GigabitEthernet0/6";
    sonic: "Ethernet20", "Ethernet24";
    supermicro_smis: "Gi0/5", "Gi0/6";
}
