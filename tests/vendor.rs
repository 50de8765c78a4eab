//! Vendor behaviour settled with sources (issue 15 items 3-8): each test drives Mercury
//! against a simulator that models what the vendor does, and asserts the switch's state
//! afterwards, not the spelling of the lines.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};
use serde_json::Value;

fn networks(lab: &Lab, device: &str, vlans: &[&str]) {
    for v in vlans {
        lab.mercury([
            "add-network",
            "--device",
            device,
            "--vlan",
            v,
            "--reason",
            "setup",
        ])
        .run()
        .expect(0);
    }
}

fn ios_setting<'a>(state: &'a Value, key: &str, port: &str) -> &'a Value {
    &state["running"]["extra"]["ios"][key][port]
}

/// Item 6: IOS trunks towards servers want `switchport nonegotiate` (no DTP frames to a
/// host).
#[test]
fn ios_server_trunks_do_not_negotiate() {
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    networks(&lab, "leaf", &["10", "120"]);
    lab.mercury([
        "attach-port",
        "--device",
        "leaf",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--mode",
        "trunk",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    let st = lab.state("leaf");
    assert_eq!(
        st["running"]["ports"]["GigabitEthernet1/0/5"]["mode"],
        "trunk"
    );
    assert_eq!(
        ios_setting(&st, "nonegotiate", "GigabitEthernet1/0/5"),
        "true"
    );
}

/// Item 6: an ISL-capable Catalyst refuses `switchport mode trunk` until the encapsulation
/// is dot1q; the per-device option `dot1q_encapsulation` sets it first.
#[test]
fn isl_capable_catalysts_need_the_dot1q_option() {
    let lab = Lab::new(&[
        SimDevice {
            sim_args: &["--model", "c3750"],
            ..SimDevice::new("old", "cisco_ios")
        },
        SimDevice {
            sim_args: &["--model", "c3750"],
            extra: "options = { dot1q_encapsulation = true }",
            ..SimDevice::new("set", "cisco_ios")
        },
    ]);
    let trunk = |d: &str| {
        lab.mercury([
            "update-port",
            "--device",
            d,
            "--port",
            "Gi1/0/5",
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120",
            "--reason",
            "r",
        ])
        .run()
    };
    for d in ["old", "set"] {
        networks(&lab, d, &["10", "110", "120"]);
    }
    let v = trunk("old").expect(1);
    assert!(
        v["msg"].as_str().unwrap().contains("Command rejected"),
        "{v}"
    );
    assert_ne!(lab.port("old", "GigabitEthernet1/0/5")["mode"], "trunk");
    trunk("set").expect(0);
    let st = lab.state("set");
    let port = &st["running"]["ports"]["GigabitEthernet1/0/5"];
    assert_eq!(port["mode"], "trunk", "{port}");
    assert_eq!(port["native_vlan"], 110);
    assert_eq!(
        ios_setting(&st, "encapsulation", "GigabitEthernet1/0/5"),
        "dot1q"
    );
    // An option the platform does not have is a configuration error, before any contact.
    lab.append_config("\n[devices.bad]\nplatform = \"cisco_ios\"\ntransport = \"local\"\noptions = { evpn = false }\n");
    let v = lab
        .mercury([
            "attach-port",
            "--device",
            "bad",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run()
        .expect(78);
    assert!(v["msg"].as_str().unwrap().contains("no such option"), "{v}");
}

/// Item 6: on IOS the ports of a port-channel carry its VLANs and keep them when the
/// port-channel is deleted; delete_lag puts each ex-member back on the idle VLAN.
#[test]
fn ios_delete_lag_resets_the_ex_members() {
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    networks(&lab, "leaf", &["10", "110", "120"]);
    lab.mercury([
        "update-lag",
        "--device",
        "leaf",
        "--lag",
        "7",
        "--member",
        "Gi1/0/5",
        "--member",
        "Gi1/0/6",
        "--mode",
        "trunk",
        "--native-vlan",
        "110",
        "--allowed-vlans",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    lab.mercury([
        "delete-lag",
        "--device",
        "leaf",
        "--lag",
        "7",
        "--member",
        "Gi1/0/5",
        "--member",
        "Gi1/0/6",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    let st = lab.state("leaf");
    assert!(st["running"]["lags"]["Port-channel7"].is_null());
    for p in ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6"] {
        let port = &st["running"]["ports"][p];
        assert_eq!(port["lag"], Value::Null, "{p}: {port}");
        assert_eq!(port["mode"], "access", "{p}: {port}");
        assert_eq!(port["access_vlan"], 10, "{p}: {port}");
        assert_eq!(port["allowed_vlans"], serde_json::json!([]), "{p}: {port}");
        assert_eq!(port["native_vlan"], Value::Null, "{p}: {port}");
    }
}

/// Item 6: Junos refuses a logical unit on an aggregated-ethernet member at commit
/// ("logical unit is not allowed on aggregated links"); update_lag removes the member's
/// `unit 0` (here: the access VLAN it had as a server port) before joining it.
#[test]
fn junos_lag_members_lose_their_unit_0() {
    let lab = Lab::new(&[SimDevice::new("leaf", "juniper")]);
    networks(&lab, "leaf", &["10", "120"]);
    lab.attach("leaf", "ge-0/0/5", "120").run().expect(0);
    assert_eq!(lab.port("leaf", "ge-0/0/5")["access_vlan"], 120);
    lab.mercury([
        "update-lag",
        "--device",
        "leaf",
        "--lag",
        "7",
        "--member",
        "ge-0/0/5",
        "--member",
        "ge-0/0/6",
        "--mode",
        "trunk",
        "--allowed-vlans",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    let st = lab.state("leaf");
    for p in ["ge-0/0/5", "ge-0/0/6"] {
        let port = &st["running"]["ports"][p];
        assert_eq!(port["lag"], "ae7", "{p}: {port}");
        assert_eq!(port["mode"], Value::Null, "{p}: {port}");
        assert_eq!(port["access_vlan"], Value::Null, "{p}: {port}");
    }
    assert_eq!(
        st["running"]["lags"]["ae7"]["allowed_vlans"],
        serde_json::json!([120])
    );
    assert_eq!(st["saved"], st["running"], "committed");
}

/// Item 6: SMIS takes `set cli pagination off` in configuration mode only (netmiko types it
/// there); the session turns paging off there and stays for the change.
#[test]
fn smis_paging_is_turned_off_in_configuration_mode() {
    let lab = Lab::new(&[SimDevice::new("leaf", "supermicro_smis")]);
    networks(&lab, "leaf", &["10", "120"]);
    let r = lab
        .mercury([
            "--verify",
            "attach-port",
            "--device",
            "leaf",
            "--port",
            "Gi 0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run();
    let v = r.expect(0);
    assert_eq!(v["data"]["verified"], true, "{v}");
    let inputs = r.inputs();
    let conf = inputs
        .iter()
        .position(|l| l == "configure terminal")
        .unwrap();
    let paging = inputs
        .iter()
        .position(|l| l == "set cli pagination off")
        .unwrap();
    assert!(conf < paging, "{inputs:?}");
    assert_eq!(lab.port("leaf", "Gi0/5")["access_vlan"], 120);
    assert!(!inputs.iter().any(|o| o.contains("Invalid")), "{inputs:?}");
}

/// Item 5: without an idle VLAN, a detach used to leave an `ovs_linux` port with no tag, no
/// vlan_mode (and its old trunks) — which OVS forwards as a trunk of every VLAN. The port
/// is now parked on 4095 with its trunks cleared.
#[test]
fn ovs_linux_detach_without_idle_vlan_parks_the_port() {
    let lab = Lab::with_defaults(
        &[SimDevice::new("host", "ovs_linux")],
        "allowed_vlans = [\"100-199\"]\n",
    );
    for args in [
        vec![
            "update-port",
            "--port",
            "eth5",
            "--mode",
            "trunk",
            "--allowed-vlans",
            "120,130",
        ],
        vec!["attach-port", "--port", "eth5", "--vlan", "120"],
        vec!["detach-port", "--port", "eth5", "--vlan", "120"],
    ] {
        let mut argv = args.clone();
        argv.extend(["--device", "host", "--reason", "r"]);
        lab.mercury(&argv).run().expect(0);
    }
    let port = lab.port("host", "eth5");
    assert_eq!(port["ovs"]["tag"], 4095, "{port}");
    assert_eq!(port["ovs"]["vlan_mode"], "access", "{port}");
    assert_eq!(port["ovs"]["trunks"], serde_json::json!([]), "{port}");
    assert_eq!(
        port["allowed_vlans"],
        serde_json::json!([]),
        "no VLAN is forwarded"
    );
    // reset_port parks too.
    lab.mercury([
        "reset-port",
        "--device",
        "host",
        "--port",
        "eth6",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    assert_eq!(lab.port("host", "eth6")["ovs"]["tag"], 4095);
}

/// Item 5: a Cumulus bridge port without access VLAN or VLAN list inherits every VLAN of
/// the bridge; with no idle VLAN to restore, detach and reset are refused before contact.
#[test]
fn cumulus_detach_without_idle_vlan_is_refused() {
    for platform in ["cumulus_nvue", "cumulus"] {
        let lab = Lab::with_defaults(
            &[SimDevice::new("leaf", platform)],
            "allowed_vlans = [\"100-199\"]\nmanage_vlans = true\n",
        );
        networks(&lab, "leaf", &["120"]);
        lab.attach("leaf", "swp5", "120").run().expect(0);
        let sent = lab.transcript("leaf").len();
        for args in [
            vec!["detach-port", "--port", "swp5", "--vlan", "120"],
            vec!["reset-port", "--port", "swp5"],
        ] {
            let mut argv = args.clone();
            argv.extend(["--device", "leaf", "--reason", "r"]);
            let v = lab.mercury(&argv).run().expect(65);
            assert!(
                v["msg"].as_str().unwrap().contains("default_vlan"),
                "{platform}: {v}"
            );
        }
        assert_eq!(lab.transcript("leaf").len(), sent, "{platform}");
        assert_eq!(lab.port("leaf", "swp5")["access_vlan"], 120, "{platform}");
    }
}

fn srl_statements(lab: &Lab, device: &str) -> Vec<String> {
    lab.state(device)["running"]["extra"]["srl"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    s.as_array()
                        .unwrap()
                        .iter()
                        .map(|w| w.as_str().unwrap().to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Item 3: an SR Linux network is an L2 EVPN service by default (a bridged vxlan-interface
/// with the VLAN as VNI, the mac-vrf holding it, bgp-evpn with the VLAN as EVI, route
/// targets), with the device's options; deleting it removes the VXLAN interface too; a
/// standalone box (`evpn = false`) gets a bare mac-vrf. The simulator refuses a commit whose
/// EVPN objects do not reference each other.
#[test]
fn srl_networks_are_evpn_services_unless_the_device_says_standalone() {
    let lab = Lab::new(&[
        SimDevice {
            extra: "options = { vxlan_interface = \"vxlan1\", rt_asn = 65001, ecmp = 2 }",
            ..SimDevice::new("leaf", "nokia_srl")
        },
        SimDevice {
            extra: "options = { evpn = false }",
            ..SimDevice::new("solo", "nokia_srl")
        },
    ]);
    // The idle VLAN (10) too: the detach below puts the port back in it, and SR Linux
    // refuses a bridged sub-interface in a mac-vrf that was never created.
    networks(&lab, "leaf", &["10", "120"]);
    let st = srl_statements(&lab, "leaf");
    for want in [
        "tunnel-interface vxlan1 vxlan-interface 120 type bridged",
        "tunnel-interface vxlan1 vxlan-interface 120 ingress vni 120",
        "network-instance mac-vrf-120 type mac-vrf",
        "network-instance mac-vrf-120 vxlan-interface vxlan1.120",
        "network-instance mac-vrf-120 protocols bgp-evpn bgp-instance 1 vxlan-interface vxlan1.120",
        "network-instance mac-vrf-120 protocols bgp-evpn bgp-instance 1 evi 120",
        "network-instance mac-vrf-120 protocols bgp-evpn bgp-instance 1 ecmp 2",
        "network-instance mac-vrf-120 protocols bgp-vpn bgp-instance 1 route-target export-rt target:65001:120",
        "network-instance mac-vrf-120 protocols bgp-vpn bgp-instance 1 route-target import-rt target:65001:120",
    ] {
        assert!(st.iter().any(|s| s == want), "missing {want:?} in {st:#?}");
    }
    lab.attach("leaf", "ethernet-1/5", "120").run().expect(0);
    assert_eq!(lab.port("leaf", "ethernet-1/5")["access_vlan"], 120);
    lab.mercury([
        "detach-port",
        "--device",
        "leaf",
        "--port",
        "ethernet-1/5",
        "--vlan",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    lab.mercury([
        "delete-network",
        "--device",
        "leaf",
        "--vlan",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    let st = srl_statements(&lab, "leaf");
    assert!(
        !st.iter()
            .any(|s| s.contains("vxlan-interface 120") || s.contains("mac-vrf-120")),
        "{st:#?}"
    );

    networks(&lab, "solo", &["120"]);
    let st = srl_statements(&lab, "solo");
    assert!(
        st.iter()
            .any(|s| s == "network-instance mac-vrf-120 type mac-vrf"),
        "{st:#?}"
    );
    assert!(
        !st.iter()
            .any(|s| s.contains("tunnel-interface") || s.contains("bgp-evpn")),
        "{st:#?}"
    );
    lab.attach("solo", "ethernet-1/5", "120").run().expect(0);

    // A bad option value is a configuration error (78), before any contact.
    lab.append_config("\n[devices.bad]\nplatform = \"nokia_srl\"\ntransport = \"local\"\noptions = { vxlan_interface = \"vxlan999\" }\n");
    lab.mercury([
        "add-network",
        "--device",
        "bad",
        "--vlan",
        "130",
        "--reason",
        "r",
    ])
    .run()
    .expect(78);
}

/// Item 4 (and item 8's wipe-all option): Netvisor creates a VLAN on every port unless told
/// `ports none`; a plugged port is in the one VLAN (its other memberships go first); the
/// scope is a device option, fabric with auto-vxlan as NGS does.
#[test]
fn pluribus_vlans_start_empty_and_a_plug_clears_other_memberships() {
    let lab = Lab::new(&[
        SimDevice::new("leaf", "pluribus"),
        SimDevice {
            // Read before and after: `unplug = all` takes a port carrying the VLAN (here
            // tagged) out of every VLAN, then the idle VLAN returns.
            extra: "options = { scope = \"fabric\", unplug = \"all\" }",
            ..SimDevice::new("fab", "pluribus")
        },
    ]);
    networks(&lab, "leaf", &["10", "120", "130"]);
    let st = lab.state("leaf");
    for (name, p) in st["running"]["ports"].as_object().unwrap() {
        assert_eq!(
            p["allowed_vlans"],
            serde_json::json!([]),
            "port {name}: {p}"
        );
        assert_eq!(p["access_vlan"], Value::Null, "port {name}: {p}");
    }
    assert_eq!(st["running"]["extra"]["netvisor"]["120"]["scope"], "local");
    // Port 5 carries 130 tagged (say, left over); a plug puts it in 120 alone.
    lab.mercury([
        "attach-port",
        "--device",
        "leaf",
        "--port",
        "5",
        "--vlan",
        "130",
        "--mode",
        "trunk",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    lab.attach("leaf", "5", "120").run().expect(0);
    let p = lab.port("leaf", "5");
    assert_eq!(p["access_vlan"], 120, "{p}");
    assert_eq!(p["allowed_vlans"], serde_json::json!([]), "{p}");

    networks(&lab, "fab", &["10", "120", "130"]);
    let st = lab.state("fab");
    assert_eq!(st["running"]["extra"]["netvisor"]["120"]["scope"], "fabric");
    assert_eq!(
        st["running"]["extra"]["netvisor"]["120"]["auto_vxlan"],
        true
    );
    lab.mercury([
        "update-port",
        "--device",
        "fab",
        "--port",
        "6",
        "--mode",
        "trunk",
        "--allowed-vlans",
        "120,130",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    lab.mercury([
        "detach-port",
        "--device",
        "fab",
        "--port",
        "6",
        "--vlan",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    let p = lab.port("fab", "6");
    // unplug = all: every membership went, then the idle VLAN came back.
    assert_eq!(p["allowed_vlans"], serde_json::json!([]), "{p}");
    assert_eq!(p["access_vlan"], 10, "{p}");
}

/// Item 8: `ensure_idle_vlan` creates the idle VLAN where it is missing before a port goes
/// back to it, and never renames one that exists (NGS's `name 100` renamed it); a platform
/// whose VLAN creation line names the VLAN (Junos) refuses the option (78).
#[test]
fn ensure_idle_vlan_creates_but_never_renames() {
    let lab = Lab::new(&[
        SimDevice {
            extra: "options = { ensure_idle_vlan = true }",
            ..SimDevice::new("ios", "cisco_ios")
        },
        SimDevice {
            extra: "options = { ensure_idle_vlan = true }",
            ..SimDevice::new("vrp", "huawei")
        },
        SimDevice {
            extra: "options = { ensure_idle_vlan = true }",
            ..SimDevice::new("nv", "pluribus")
        },
        SimDevice {
            extra: "options = { ensure_idle_vlan = true }",
            ..SimDevice::new("junos", "juniper")
        },
    ]);
    for (d, port) in [
        ("ios", "Gi1/0/5"),
        ("vrp", "GigabitEthernet0/0/5"),
        ("nv", "5"),
    ] {
        networks(&lab, d, &["120"]);
        lab.attach(d, port, "120").run().expect(0);
        assert!(
            lab.state(d)["running"]["vlans"]["10"].is_null(),
            "{d}: idle VLAN present"
        );
        lab.mercury([
            "detach-port",
            "--device",
            d,
            "--port",
            port,
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run()
        .expect(0);
        let st = lab.state(d);
        assert!(
            st["running"]["vlans"]["10"].is_object(),
            "{d}: idle VLAN not created"
        );
        let canonical = lab.state(d)["running"]["ports"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(_, p)| p["access_vlan"] == 10)
            .map(|(n, _)| n.clone());
        assert!(canonical.is_some(), "{d}: no port in the idle VLAN");
    }
    // An existing idle VLAN keeps its name.
    lab.mercury([
        "add-network",
        "--device",
        "ios",
        "--vlan",
        "10",
        "--name",
        "parking",
        "--reason",
        "r",
    ])
    .run();
    let before = lab.state("ios")["running"]["vlans"]["10"]["name"].clone();
    lab.mercury([
        "reset-port",
        "--device",
        "ios",
        "--port",
        "Gi1/0/6",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    assert_eq!(lab.state("ios")["running"]["vlans"]["10"]["name"], before);
    let v = lab
        .mercury([
            "reset-port",
            "--device",
            "junos",
            "--port",
            "ge-0/0/5",
            "--reason",
            "r",
        ])
        .run()
        .expect(78);
    assert!(
        v["msg"].as_str().unwrap().contains("ensure_idle_vlan"),
        "{v}"
    );
}

/// Item 8: PowerConnect ports can be plugged in general mode (NGS's ngs_switchport_mode =
/// general): the VLAN untagged and as PVID.
#[test]
fn powerconnect_plugs_in_general_mode_when_asked() {
    let lab = Lab::new(&[SimDevice {
        // Read before and after (verify on): a general-mode port with only its PVID
        // untagged reads back as this device's access port.
        extra: "options = { plug_mode = \"general\" }",
        ..SimDevice::new("pc", "dell_powerconnect")
    }]);
    networks(&lab, "pc", &["10", "120"]);
    lab.attach("pc", "Gi1/0/5", "120").run().expect(0);
    let p = lab.port("pc", "Gi1/0/5");
    assert_eq!(p["mode"], "hybrid", "general mode: {p}");
    assert_eq!(p["native_vlan"], 120, "{p}");
    lab.mercury([
        "detach-port",
        "--device",
        "pc",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    let p = lab.port("pc", "Gi1/0/5");
    assert_eq!(p["mode"], "hybrid", "still general mode: {p}");
    assert_eq!(p["native_vlan"], 10, "the idle VLAN is back as PVID: {p}");
    assert_eq!(p["allowed_vlans"], serde_json::json!([]), "{p}");
}
