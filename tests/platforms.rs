//! End-to-end, per platform: mercury drives `mercury-sim` for that platform over the
//! `command` transport, and each step is checked against the simulated switch's state,
//! not against the lines sent. The simulator implements each vendor's CLI from the
//! vendor's syntax independently of `plugins.toml`, and rejects what the vendor would
//! reject, so a wrong template fails here.
//!
//! Steps: add networks (and their names), attach an access port, detach it (idle VLAN
//! restored, port shut), declare a trunk (native VLAN + tagged list), add and remove a
//! tagged VLAN, build a LAG with two members and L2 settings on it, delete the LAG, delete
//! a network. Steps a platform declares unsupported are checked to fail with exit 65.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};
use serde_json::Value;

/// What one platform's run needs to know.
struct Spec {
    platform: &'static str,
    /// Three ports, spelled as the simulator's state keys them.
    ports: [&'static str; 3],
    /// The simulator records VLAN objects (OVS has none).
    vlans: bool,
    /// The simulator records the VLAN name Mercury sets.
    names: bool,
    /// Trunk with a native (untagged) VLAN is supported.
    native: bool,
    /// The L2 mode a trunk with a native VLAN shows in the state.
    trunk_mode: &'static str,
    /// The LAG: its state key, aggregation mode, and whether L2 settings go on it; `None`
    /// when the platform declares LAGs unsupported (exit 65 expected).
    lag: Option<(&'static str, &'static str, bool)>,
    /// The LAG step cannot run on the simulator (see the platform's comment).
    lag_sim_gap: bool,
    /// Removing one tagged VLAN cannot run on the simulator (see the platform's comment).
    untag_sim_gap: bool,
}

const fn spec(platform: &'static str, ports: [&'static str; 3]) -> Spec {
    Spec {
        platform,
        ports,
        vlans: true,
        names: true,
        native: true,
        trunk_mode: "trunk",
        lag: None,
        lag_sim_gap: false,
        untag_sim_gap: false,
    }
}

fn lab(s: &Spec, extra: &str) -> Lab {
    Lab::with_defaults(
        &[SimDevice {
            extra,
            ..SimDevice::new("leaf", s.platform)
        }],
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
    )
}

fn run(lab: &Lab, args: &[&str]) -> Value {
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(["--device", "leaf", "--reason", "e2e"]);
    lab.mercury(&argv).run().expect(0)
}

fn running(lab: &Lab) -> Value {
    lab.state("leaf")["running"].clone()
}

fn vlans_of(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// The untagged VLAN of a trunk: `native_vlan`, or the access VLAN of a hybrid port
/// (Onyx keeps the untagged VLAN of a hybrid port as its access VLAN).
fn untagged(port: &Value) -> Option<u64> {
    port["native_vlan"]
        .as_u64()
        .or_else(|| (port["mode"] == "hybrid").then(|| port["access_vlan"].as_u64())?)
}

fn exercise(s: &Spec) {
    let lab = lab(s, "shut_unused_ports = true");
    let [p1, p2, p3] = s.ports;
    let ctx = |step: &str| format!("{}: {step}", s.platform);

    // Networks.
    for v in ["10", "110", "120", "130", "131"] {
        let name = format!("tenant-{v}");
        run(&lab, &["add-network", "--vlan", v, "--name", &name]);
    }
    if s.vlans {
        let r = running(&lab);
        for v in ["10", "110", "120", "130", "131"] {
            assert!(r["vlans"].get(v).is_some(), "{}: {r}", ctx("add-network"));
        }
        if s.names {
            assert_eq!(r["vlans"]["120"]["name"], "tenant-120", "{}", ctx("name"));
        }
    }

    // Access attach: idle VLAN removed, port in VLAN 120 and enabled.
    run(&lab, &["attach-port", "--port", p1, "--vlan", "120"]);
    let port = &running(&lab)["ports"][p1];
    assert_eq!(port["mode"], "access", "{}: {port}", ctx("attach"));
    assert_eq!(port["access_vlan"], 120, "{}: {port}", ctx("attach"));
    assert_eq!(port["admin_up"], true, "{}: {port}", ctx("attach"));
    let saved = &lab.state("leaf")["saved"]["ports"][p1];
    assert_eq!(saved["access_vlan"], 120, "{}: saved {saved}", ctx("save"));

    // Detach: back in the idle VLAN, shut.
    run(&lab, &["detach-port", "--port", p1, "--vlan", "120"]);
    let port = &running(&lab)["ports"][p1];
    assert_eq!(port["access_vlan"], 10, "{}: {port}", ctx("detach"));
    assert_eq!(port["admin_up"], false, "{}: {port}", ctx("detach"));

    // Trunk: native VLAN + tagged list (NGS left several platforms without the native).
    let trunk = [
        "update-port",
        "--port",
        p1,
        "--mode",
        "trunk",
        "--native-vlan",
        "110",
        "--allowed-vlans",
        "120,130",
    ];
    if s.native {
        run(&lab, &trunk);
        let port = &running(&lab)["ports"][p1];
        assert_eq!(port["mode"], s.trunk_mode, "{}: {port}", ctx("trunk"));
        assert_eq!(untagged(port), Some(110), "{}: {port}", ctx("native"));
        let tagged = vlans_of(&port["allowed_vlans"]);
        assert!(
            tagged.contains(&120) && tagged.contains(&130),
            "{}: {port}",
            ctx("allowed")
        );
        assert_eq!(port["admin_up"], true, "{}: {port}", ctx("trunk enable"));
    } else {
        let r = lab
            .mercury(trunk.iter().chain(&["--device", "leaf", "--reason", "e2e"]))
            .run();
        r.expect(65);
    }

    // Tagged VLAN added to and removed from the trunk.
    run(
        &lab,
        &[
            "attach-port",
            "--port",
            p1,
            "--vlan",
            "131",
            "--mode",
            "trunk",
        ],
    );
    let tagged = vlans_of(&running(&lab)["ports"][p1]["allowed_vlans"]);
    assert!(tagged.contains(&131), "{}: {tagged:?}", ctx("attach trunk"));
    if !s.untag_sim_gap {
        run(
            &lab,
            &[
                "detach-port",
                "--port",
                p1,
                "--vlan",
                "131",
                "--mode",
                "trunk",
            ],
        );
    }
    let port = &running(&lab)["ports"][p1];
    let tagged = vlans_of(&port["allowed_vlans"]);
    assert!(
        s.untag_sim_gap || !tagged.contains(&131),
        "{}: {port}",
        ctx("detach trunk")
    );
    if s.native {
        assert_eq!(untagged(port), Some(110), "{}: {port}", ctx("native kept"));
    }

    // A trunk declared an access port again (Ironic's next cleaning or provisioning step
    // after a tenant trunk, or a switchport edited from trunk to access): read first, its
    // tagged and native VLANs go, whatever the platform's mode word leaves behind.
    let reads = matches!(
        mercury::catalog::Catalog::builtin()
            .unwrap()
            .get(s.platform)
            .unwrap()
            .verify,
        mercury::catalog::Verify::Show(_)
    );
    if s.native && reads && !s.untag_sim_gap {
        run(
            &lab,
            &[
                "update-port",
                "--port",
                p1,
                "--mode",
                "access",
                "--native-vlan",
                "120",
            ],
        );
        let port = &running(&lab)["ports"][p1];
        assert_eq!(port["mode"], "access", "{}: {port}", ctx("trunk to access"));
        assert_eq!(
            port["access_vlan"],
            120,
            "{}: {port}",
            ctx("trunk to access")
        );
        // Nothing tagged left, not even inert (IOS-like: the list is `none`).
        let tagged = vlans_of(&port["allowed_vlans"]);
        assert!(tagged.is_empty(), "{}: {port}", ctx("trunk to access"));
        assert!(
            port["native_vlan"].is_null(),
            "{}: {port}",
            ctx("trunk to access")
        );
    }

    // LAG with two members and L2 settings on the LAG interface.
    let mut lag_args = vec!["update-lag", "--lag", "7", "--member", p2, "--member", p3];
    match s.lag {
        _ if s.lag_sim_gap => {}
        Some((key, aggregation, l2)) => {
            lag_args.extend(["--aggregation-mode", aggregation]);
            if l2 {
                lag_args.extend(["--mode", "trunk", "--allowed-vlans", "120"]);
                if s.native {
                    lag_args.extend(["--native-vlan", "110"]);
                }
            }
            run(&lab, &lag_args);
            let r = running(&lab);
            let lag = &r["lags"][key];
            let mut members: Vec<&str> = lag["members"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            members.sort_unstable();
            let mut want = vec![p2, p3];
            want.sort_unstable();
            assert_eq!(members, want, "{}: {r}", ctx("lag members"));
            assert_eq!(lag["mode"], aggregation, "{}: {lag}", ctx("lag mode"));
            if l2 {
                let tagged = vlans_of(&lag["allowed_vlans"]);
                assert!(tagged.contains(&120), "{}: {lag}", ctx("lag allowed"));
                if s.native {
                    let native = lag["native_vlan"].as_u64().or_else(|| {
                        (lag["mode_l2"] == "hybrid")
                            .then(|| lag["access_vlan"].as_u64())
                            .flatten()
                    });
                    assert_eq!(native, Some(110), "{}: {lag}", ctx("lag native"));
                }
            }
            run(
                &lab,
                &["delete-lag", "--lag", "7", "--member", p2, "--member", p3],
            );
            let r = running(&lab);
            let gone = r["lags"]
                .get(key)
                .is_none_or(|l| l["members"].as_array().is_none_or(|m| m.is_empty()));
            assert!(gone, "{}: {r}", ctx("delete-lag"));
            assert!(
                r["ports"][p2]["lag"].is_null(),
                "{}: {r}",
                ctx("member freed")
            );
        }
        None => {
            lag_args.extend(["--device", "leaf", "--reason", "e2e"]);
            lab.mercury(&lag_args).run().expect(65);
        }
    }

    // Reset undoes what update_port set: the description ("Ironic Port <uuid>" from
    // Ironic) goes where the platform can remove one, the port is shut (shut_unused_ports)
    // and back in the idle VLAN.
    let catalog = mercury::catalog::Catalog::builtin().unwrap();
    let platform = catalog.get(s.platform).unwrap();
    let label = "Ironic Port 0f1e2d3c";
    let mut update = vec![
        "update-port",
        "--port",
        p2,
        "--mode",
        "access",
        "--native-vlan",
        "120",
    ];
    if platform.supports("description") {
        update.extend(["--description", label]);
    }
    run(&lab, &update);
    if platform.supports("description") {
        let port = &running(&lab)["ports"][p2];
        assert_eq!(port["description"], label, "{}: {port}", ctx("description"));
    }
    run(&lab, &["reset-port", "--port", p2, "--native-vlan", "120"]);
    let port = &running(&lab)["ports"][p2];
    assert_eq!(port["access_vlan"], 10, "{}: {port}", ctx("reset idle"));
    assert_eq!(port["admin_up"], false, "{}: {port}", ctx("reset shut"));
    if platform.supports("description_clear") {
        assert_eq!(
            port["description"],
            "",
            "{}: {port}",
            ctx("reset description")
        );
    }

    // A VLAN the port needs but the switch lacks: where the VLAN table is read, it is
    // created first (manage_vlans), in the same session.
    if has_vlan_table(platform) {
        assert!(running(&lab)["vlans"].get("140").is_none());
        let v = run(&lab, &["attach-port", "--port", p2, "--vlan", "140"]);
        let r = running(&lab);
        assert!(
            r["vlans"].get("140").is_some(),
            "{}: {r}",
            ctx("VLAN on demand")
        );
        assert_eq!(
            r["ports"][p2]["access_vlan"],
            140,
            "{}: {r}",
            ctx("VLAN on demand")
        );
        assert!(
            v["warnings"].to_string().contains("VLAN 140 did not exist"),
            "{}: {v}",
            ctx("VLAN on demand warning")
        );
    }

    // Delete a network.
    run(
        &lab,
        &["delete-network", "--vlan", "131", "--name", "tenant-131"],
    );
    if s.vlans {
        let r = running(&lab);
        assert!(
            r["vlans"].get("131").is_none(),
            "{}: {r}",
            ctx("delete-network")
        );
    }
}

/// Whether the platform reads the device's VLAN table before a port uses a VLAN.
fn has_vlan_table(p: &mercury::catalog::Platform) -> bool {
    matches!(&p.verify, mercury::catalog::Verify::Show(s) if s.vlan_table.is_some())
}

/// Without `manage_vlans`, a port is never put in a VLAN the switch lacks: the request is
/// refused before anything is sent (exit 77), naming the key, on every platform that reads
/// its VLAN table. (Before, IOS-like simulators created the VLAN behind the network team's
/// back and strict ones rejected the line half-way.)
#[test]
fn missing_vlan_without_manage_vlans_is_refused_before_anything_is_sent() {
    let catalog = mercury::catalog::Catalog::builtin().unwrap();
    let mut tried = 0;
    for name in catalog.names() {
        let platform = catalog.get(name).unwrap();
        if !has_vlan_table(platform) {
            continue;
        }
        let port = match name {
            "cisco_ios" => "GigabitEthernet1/0/5",
            "cisco_nxos" => "Ethernet1/5",
            "arista_eos" => "Ethernet5",
            "aruba_aoscx" => "1/1/5",
            "dell_os10" => "ethernet1/1/5",
            "huawei" => "GigabitEthernet0/0/5",
            "huawei_vrpv8" => "GE1/0/5",
            "hpe_comware" => "GigabitEthernet1/0/5",
            "juniper" => "ge-0/0/5",
            other => panic!("{other}: add its port name to this test"),
        };
        let lab = Lab::with_defaults(
            &[SimDevice::new("leaf", name)],
            "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = false\n",
        );
        let v = lab
            .mercury([
                "attach-port",
                "--device",
                "leaf",
                "--port",
                port,
                "--vlan",
                "141",
                "--reason",
                "e2e",
            ])
            .run()
            .expect(77);
        let msg = v["msg"].as_str().unwrap();
        assert!(
            msg.contains("denied by devices.leaf.manage_vlans"),
            "{name}: {v}"
        );
        assert!(
            msg.contains("VLAN 141 not configured on leaf"),
            "{name}: {v}"
        );
        assert_eq!(v["changed"], false, "{name}: {v}");
        // Only reads were sent: the port and the VLAN table.
        let sent: Vec<&str> = v["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["input"].as_str())
            .collect();
        assert!(
            !sent.iter().any(|l| l.contains("141")),
            "{name}: sent {sent:?}"
        );
        let r = &lab.state("leaf")["running"];
        assert!(r["vlans"].get("141").is_none(), "{name}: {r}");
        assert_ne!(r["ports"][port]["access_vlan"], 141, "{name}: {r}");
        tried += 1;
    }
    assert!(tried >= 7, "only {tried} platforms read their VLAN table");
}

/// Platforms that plug OVS representor ports (SmartNIC/DPU) are verified against a real
/// ovsdb-server by their own tests, not by these switch operations.
fn representors(catalog: &mercury::catalog::Catalog, name: &str) -> bool {
    catalog.get(name).is_ok_and(|p| p.supports("plug"))
}

macro_rules! platforms {
    ($($platform:ident => $spec:expr;)*) => {
        $(
            #[test]
            fn $platform() {
                let s: Spec = $spec;
                assert_eq!(s.platform, stringify!($platform));
                exercise(&s);
            }
        )*

        /// Every catalog platform is exercised here.
        #[test]
        fn every_platform_is_exercised_end_to_end() {
            let tested = [$(stringify!($platform)),*];
            let catalog = mercury::catalog::Catalog::builtin().expect("built-in catalog");
            let missing: Vec<&str> =
                catalog.names().filter(|n| !tested.contains(n) && !representors(&catalog, n)).collect();
            assert!(missing.is_empty(), "no end-to-end test for {missing:?}");
        }
    };
}

const IOS3: [&str; 3] = [
    "GigabitEthernet1/0/5",
    "GigabitEthernet1/0/6",
    "GigabitEthernet1/0/7",
];

platforms! {
    arista_eos => Spec {
        lag: Some(("Port-Channel7", "lacp", true)),
        ..spec("arista_eos", ["Ethernet5", "Ethernet6", "Ethernet7"])
    };
    aruba_aoscx => Spec {
        lag: Some(("lag7", "lacp", true)),
        ..spec("aruba_aoscx", ["1/1/5", "1/1/6", "1/1/7"])
    };
    brocade_fastiron => Spec {
        ..spec("brocade_fastiron", ["ethernet1/1/5", "ethernet1/1/6", "ethernet1/1/7"])
    };
    cisco_ios => Spec {
        lag: Some(("Port-channel7", "lacp", true)),
        ..spec("cisco_ios", IOS3)
    };
    cisco_nxos => Spec {
        lag: Some(("port-channel7", "lacp", true)),
        ..spec("cisco_nxos", ["Ethernet1/5", "Ethernet1/6", "Ethernet1/7"])
    };
    cisco_s300 => Spec {
        names: false,
        // Sx300 LACP is `channel-group N mode auto`, which the simulator does not know.
        lag: Some(("Port-channel7", "static", true)),
        ..spec("cisco_s300", IOS3)
    };
    cumulus => Spec {
        names: false,
        lag: Some(("bond7", "lacp", true)),
        ..spec("cumulus", ["swp5", "swp6", "swp7"])
    };
    cumulus_nvue => Spec {
        names: false,
        lag: Some(("bond7", "lacp", true)),
        ..spec("cumulus_nvue", ["swp5", "swp6", "swp7"])
    };
    dell_enterprise_sonic => Spec {
        names: false,
        lag: Some(("PortChannel7", "lacp", true)),
        ..spec("dell_enterprise_sonic", ["Ethernet20", "Ethernet24", "Ethernet28"])
    };
    dell_force10 => Spec {
        native: false,
        ..spec("dell_force10", ["TenGigabitEthernet1/5", "TenGigabitEthernet1/6", "TenGigabitEthernet1/7"])
    };
    // OS10 removes a tagged VLAN with `no switchport trunk allowed vlan N` (NGS's
    // template), which the simulator now knows too.
    dell_os10 => Spec {
        lag: Some(("port-channel7", "lacp", true)),
        ..spec("dell_os10", ["ethernet1/1/5", "ethernet1/1/6", "ethernet1/1/7"])
    };
    // PowerConnect LACP is `channel-group N mode auto`; the simulator accepts it but
    // records a static LAG, so the static mode (`on`) is what is checked here.
    dell_powerconnect => Spec {
        names: false,
        trunk_mode: "hybrid",
        lag: Some(("Po7", "static", true)),
        ..spec("dell_powerconnect", ["Gi1/0/5", "Gi1/0/6", "Gi1/0/7"])
    };
    hpe_comware => Spec {
        lag: Some(("Bridge-Aggregation7", "lacp", true)),
        ..spec("hpe_comware", IOS3)
    };
    huawei => Spec {
        lag: Some(("Eth-Trunk7", "lacp", true)),
        ..spec("huawei", ["GigabitEthernet0/0/5", "GigabitEthernet0/0/6", "GigabitEthernet0/0/7"])
    };
    huawei_vrpv8 => Spec {
        lag: Some(("Eth-Trunk7", "lacp", true)),
        ..spec("huawei_vrpv8", ["GE1/0/5", "GE1/0/6", "GE1/0/7"])
    };
    juniper => Spec {
        lag: Some(("ae7", "lacp", true)),
        ..spec("juniper", ["ge-0/0/5", "ge-0/0/6", "ge-0/0/7"])
    };
    // The simulator's Onyx keeps a hybrid port's allowed-vlan list when the port is made
    // an access port again (whether Onyx drops it is unconfirmed, docs/platforms.md);
    // Mercury removes the VLANs first, so the list is asserted empty.
    mellanox_mlnxos => Spec {
        trunk_mode: "hybrid",
        lag: Some(("Po7", "lacp", true)),
        ..spec("mellanox_mlnxos", ["Eth1/5", "Eth1/6", "Eth1/7"])
    };
    nokia_srl => Spec {
        lag: Some(("lag7", "lacp", true)),
        ..spec("nokia_srl", ["ethernet-1/5", "ethernet-1/6", "ethernet-1/7"])
    };
    ovs_linux => Spec {
        vlans: false,
        names: false,
        ..spec("ovs_linux", ["eth5", "eth6", "eth7"])
    };
    pluribus => Spec {
        lag: Some(("trunk7", "lacp", false)),
        ..spec("pluribus", ["5", "6", "7"])
    };
    // RGOS aggregate ports take members with `port-group N`; the simulator models IOS's
    // `channel-group` instead, so LAGs are checked in the dry-run snapshot only.
    ruijie => Spec {
        lag_sim_gap: true,
        ..spec("ruijie", ["GigabitEthernet0/5", "GigabitEthernet0/6", "GigabitEthernet0/7"])
    };
    sonic => Spec {
        names: false,
        lag: Some(("PortChannel7", "lacp", true)),
        ..spec("sonic", ["Ethernet20", "Ethernet24", "Ethernet28"])
    };
    supermicro_smis => Spec {
        lag: Some(("port-channel7", "lacp", true)),
        ..spec("supermicro_smis", ["Gi0/5", "Gi0/6", "Gi0/7"])
    };
}

/// VRP hybrid ports: an untagged PVID and tagged VLANs without trunk semantics.
#[test]
fn huawei_hybrid_ports() {
    for (platform, port) in [
        ("huawei", "GigabitEthernet0/0/5"),
        ("huawei_vrpv8", "GE1/0/5"),
    ] {
        let s = spec(platform, [port, port, port]);
        let lab = lab(&s, "");
        for v in ["10", "110", "120", "130"] {
            run(&lab, &["add-network", "--vlan", v]);
        }
        run(&lab, &["attach-port", "--port", port, "--vlan", "120"]);
        run(
            &lab,
            &[
                "update-port",
                "--port",
                port,
                "--mode",
                "hybrid",
                "--native-vlan",
                "110",
                "--allowed-vlans",
                "110,120,130",
            ],
        );
        let p = &running(&lab)["ports"][port];
        assert_eq!(p["mode"], "hybrid", "{platform}: {p}");
        assert_eq!(p["native_vlan"], 110, "{platform}: {p}");
        assert_eq!(
            vlans_of(&p["allowed_vlans"]),
            vec![120, 130],
            "{platform}: {p}"
        );
    }
    // Platforms without hybrid ports refuse before contacting the device.
    let s = spec("cisco_ios", IOS3);
    let lab = lab(&s, "");
    let r = lab
        .mercury([
            "update-port",
            "--port",
            IOS3[0],
            "--mode",
            "hybrid",
            "--native-vlan",
            "110",
            "--device",
            "leaf",
            "--reason",
            "e2e",
        ])
        .run();
    let v = r.expect(65);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("hybrid_mode is not supported on cisco_ios"),
        "{v}"
    );
}

/// The VLANs a port's trunk list carries in the simulator's state, on a platform whose
/// trunks carry every VLAN by default: an empty list is every VLAN unless `allowed_none`.
fn carried(port: &Value) -> Vec<u64> {
    let listed = vlans_of(&port["allowed_vlans"]);
    if listed.is_empty() && port["allowed_none"] != true {
        (1..=4094).collect()
    } else {
        listed
    }
}

/// IOS-like trunks carry every VLAN until their list is set (issue 15 item 2): a port that
/// becomes a trunk carries exactly the VLAN attached; the last tagged VLAN detached leaves
/// none (read back as none, not as every VLAN); a reset trunk is left with the list `none`,
/// so a later `switchport mode trunk` exposes nothing.
#[test]
fn ios_like_trunks_carry_exactly_what_was_asked() {
    for (platform, port) in [
        ("cisco_ios", "GigabitEthernet1/0/5"),
        ("cisco_nxos", "Ethernet1/5"),
        ("arista_eos", "Ethernet5"),
        ("ruijie", "GigabitEthernet0/5"),
        ("supermicro_smis", "Gi0/5"),
    ] {
        let s = spec(platform, [port, port, port]);
        let lab = lab(&s, "");
        for v in ["10", "120", "130"] {
            run(&lab, &["add-network", "--vlan", v]);
        }
        run(
            &lab,
            &[
                "attach-port",
                "--port",
                port,
                "--vlan",
                "120",
                "--mode",
                "trunk",
            ],
        );
        let p = &running(&lab)["ports"][port];
        assert_eq!(p["mode"], "trunk", "{platform}: {p}");
        assert_eq!(carried(p), vec![120], "{platform}: trunk attach: {p}");

        // The last tagged VLAN goes: the list is empty, and read back as empty.
        run(
            &lab,
            &[
                "detach-port",
                "--port",
                port,
                "--vlan",
                "120",
                "--mode",
                "trunk",
            ],
        );
        let p = &running(&lab)["ports"][port];
        assert_eq!(carried(p), Vec::<u64>::new(), "{platform}: detach: {p}");
        let v = lab
            .mercury(["verify-port", "--port", port, "--device", "leaf"])
            .run()
            .expect(0);
        let state = &v["data"]["ports"][0]["state"];
        assert_eq!(state["mode"], "trunk", "{platform}: read back: {v}");
        assert_eq!(state["allowed_vlans"], "", "{platform}: read back: {v}");

        run(
            &lab,
            &[
                "attach-port",
                "--port",
                port,
                "--vlan",
                "130",
                "--mode",
                "trunk",
            ],
        );
        run(&lab, &["reset-port", "--port", port]);
        let p = &running(&lab)["ports"][port];
        assert_eq!(p["mode"], "access", "{platform}: reset: {p}");
        assert_eq!(p["access_vlan"], 10, "{platform}: reset: {p}");
        assert_eq!(carried(p), Vec::<u64>::new(), "{platform}: reset list: {p}");
    }
}

/// Onyx: a hybrid port reset (or declared access) leaves no hybrid allowed-vlan list, even
/// where `switchport mode access` keeps it (the simulator's model; unconfirmed on Onyx).
#[test]
fn onyx_hybrid_port_reset_leaves_no_tagged_list() {
    let port = "Eth1/5";
    let s = spec("mellanox_mlnxos", [port, port, port]);
    let lab = lab(&s, "");
    for v in ["10", "110", "120", "130"] {
        run(&lab, &["add-network", "--vlan", v]);
    }
    run(
        &lab,
        &[
            "update-port",
            "--port",
            port,
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120,130",
        ],
    );
    let p = &running(&lab)["ports"][port];
    assert_eq!(vlans_of(&p["allowed_vlans"]), vec![120, 130], "{p}");
    run(&lab, &["reset-port", "--port", port]);
    let p = &running(&lab)["ports"][port];
    assert_eq!(p["mode"], "access", "{p}");
    assert_eq!(p["access_vlan"], 10, "{p}");
    assert_eq!(vlans_of(&p["allowed_vlans"]), Vec::<u64>::new(), "{p}");
}
