//! Every reader against real device output: the captures and fixtures in
//! `tests/fixtures/real/<platform>/` (provenance and licence in its `SOURCES.md`) are fed to
//! the platform's parser as the catalog configures it, and the normalised port state is
//! checked field by field. None of these files was written by this project.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

use mercury::catalog::{Catalog, Verify};
use mercury::verify::state::PortState;

fn fixture(platform: &str, file: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real")
        .join(platform)
        .join(file);
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The platform's reader on `files` (in the catalog's show order) for `port`, given as the
/// device prints it and canonicalised as Mercury does before reading.
fn read(platform: &str, port: &str, files: &[&str]) -> PortState {
    try_read(platform, port, files).unwrap_or_else(|e| panic!("{platform} {port}: {e}"))
}

fn try_read(platform: &str, port: &str, files: &[&str]) -> Result<PortState, String> {
    let catalog = Catalog::builtin().unwrap();
    let p = catalog.get(platform).unwrap();
    let Verify::Show(spec) = &p.verify else {
        panic!("{platform} has no reader");
    };
    let port = p.canonical_port(port).map_err(|e| e.0)?;
    let outputs: Vec<String> = files.iter().map(|f| fixture(platform, f)).collect();
    mercury::verify::parse::parse(p, spec, &port, &outputs)
}

fn vlans(list: &[u16]) -> BTreeSet<u16> {
    list.iter().copied().collect()
}

// ---- Dell OS9 (dell_force10): `show vlan` membership, running-config settings ----------

#[test]
fn os9_tagged_port_in_two_vlans_across_continuation_rows() {
    // VLAN 100 lists `T Te 0/30` on its first row, VLAN 330 `T Te 0/30,35-37`.
    let s = read("dell_force10", "Te 0/30", &["show_vlan_1.raw"]);
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(s.allowed_vlans, vlans(&[100, 330]));
    assert_eq!(s.native_vlan, None);
    // 0/36 only through the range `35-37` of VLAN 330's row.
    let s = read(
        "dell_force10",
        "TenGigabitEthernet 0/36",
        &["show_vlan_1.raw"],
    );
    assert_eq!(s.allowed_vlans, vlans(&[330]));
}

#[test]
fn os9_untagged_ports_on_continuation_rows_and_other_types() {
    // `U Te 0/40-41,44` is the second row of VLAN 100; `U Fo 0/52` its third.
    for (port, vlan) in [
        ("Te 0/41", 100),
        ("TenGigabitEthernet 0/44", 100),
        ("fortyGigE 0/52", 100),
        ("Te 0/38", 330),
        ("Te 0/7", 12),
        ("Te 0/46", 12),
        ("Te 0/25", 380),
        // The default VLAN (`*`) lists its members too: `U Fo 0/48,56,60`.
        ("fortyGigE 0/56", 1),
    ] {
        let s = read("dell_force10", port, &["show_vlan_1.raw"]);
        assert_eq!(s.mode.as_deref(), Some("access"), "{port}");
        assert_eq!(s.access_vlan, Some(vlan), "{port}");
        assert!(s.allowed_vlans.is_empty(), "{port}");
    }
    // In no VLAN at all.
    let s = read("dell_force10", "Te 0/50", &["show_vlan_1.raw"]);
    assert_eq!((s.mode, s.access_vlan), (None, None));
}

#[test]
fn os9_newer_legend_and_named_vlans() {
    // The newer code legend (VLT, OpenFlow) and descriptions in the table.
    let s = read("dell_force10", "Te 0/1", &["show_vlan.raw"]);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(10))
    );
}

#[test]
fn os9_port_settings_from_the_running_config() {
    // `interface fortyGigE 0/20` / ` switchport` / ` shutdown`, among many stanzas; its
    // membership is the `!untagged` comment of the default VLAN, which the VLAN table
    // carries.
    let s = read(
        "dell_force10",
        "fortyGigE 0/20",
        &["show_running-config", "show_vlan_1.raw"],
    );
    assert_eq!(s.admin_up, Some(false));
    assert_eq!(s.description.as_deref(), Some(""));
    // Fo 0/20 is in none of show_vlan_1's rows (another switch).
    assert_eq!(s.mode, None);
    // Without the VLAN table nothing is read.
    assert!(try_read("dell_force10", "fortyGigE 0/20", &["show_running-config"]).is_err());
}

// ---- Brocade / Ruckus FastIron: VLAN stanzas, interface stanzas -------------------------

#[test]
fn fastiron_stacked_ports_in_to_ranges_and_metro_ring_blocks() {
    let f = &["show_running-config_vlan.raw"];
    // ` untagged ethe 1/1/3 to 1/1/5 ethe 1/1/7 to 1/1/8 `
    for port in ["ethe 1/1/4", "ethernet 1/1/8", "1/1/3"] {
        let s = read("brocade_fastiron", port, f);
        assert_eq!(
            (s.mode.as_deref(), s.access_vlan),
            (Some("access"), Some(10)),
            "{port}"
        );
    }
    // ` tagged ethe 1/1/24 ethe 2/1/1 `, named again in the metro-ring block below it.
    let s = read("brocade_fastiron", "ethernet 1/1/24", f);
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(s.allowed_vlans, vlans(&[10]));
    let s = read("brocade_fastiron", "ethernet 2/3/2", f);
    assert_eq!(s.allowed_vlans, vlans(&[60]));
    // Listed nowhere: the (unprinted) default VLAN.
    let s = read("brocade_fastiron", "ethernet 1/1/6", f);
    assert_eq!((s.mode, s.access_vlan), (None, None));
}

#[test]
fn fastiron_unstacked_bare_port_numbers() {
    let f = &["show_running-config_vlan_1.raw"];
    let s = read("brocade_fastiron", "2", f);
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(
        s.allowed_vlans,
        vlans(&[10, 13, 14, 100, 146, 149, 151, 152, 154, 175])
    );
    let s = read("brocade_fastiron", "ethe 19", f);
    assert_eq!(s.allowed_vlans, vlans(&[154]));
    let s = read("brocade_fastiron", "ethernet 21", f);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(149))
    );
}

#[test]
fn fastiron_lag_items_and_mixed_show_output() {
    // `show vlan brief`, `show vlan id` and `show run vlan id` in one capture; the VLAN
    // stanza mixes ports and `lag 11 to 12`.
    let f = &["icx_show_vlan_brief_id_run.txt"];
    let s = read("brocade_fastiron", "ethernet 1/1/10", f);
    assert_eq!(s.allowed_vlans, vlans(&[3]));
    let s = read("brocade_fastiron", "ethernet 1/1/21", f);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(3))
    );
    // LAG 12 is not port 12.
    let s = read("brocade_fastiron", "ethernet 1/1/12", f);
    assert_eq!(s.mode, None);
}

#[test]
fn fastiron_port_name_and_disable_from_interface_stanzas() {
    let f = &[
        "icx_show_vlan_brief_id_run.txt",
        "icx_show_running-config_interface.cfg",
    ];
    let s = read("brocade_fastiron", "ethernet 1/1/2", f);
    assert_eq!(s.description.as_deref(), Some("test-interface-2"));
    assert_eq!(s.admin_up, Some(true));
    // A port without a stanza has the defaults.
    let s = read("brocade_fastiron", "ethernet 1/1/30", f);
    assert_eq!(s.description.as_deref(), Some(""));
    // `interface loopback 10` / ` disable` is not a port.
    let s = read("brocade_fastiron", "ethernet 1/1/3", f);
    assert_eq!(s.admin_up, Some(true));
}

// ---- NVIDIA Mellanox Onyx: the flat running-config --------------------------------------

#[test]
fn onyx_ranges_in_the_flat_running_config() {
    let f = &["show_running-config.cfg"];
    // `interface ethernet 1/7-1/8 channel-group 1 mode active`, then
    // `interface ethernet 1/7-1/8 dcb priority-flow-control mode on force` (not read).
    for port in ["Eth1/7", "ethernet 1/8"] {
        let s = read("mellanox_mlnxos", port, f);
        assert_eq!(s.lag.as_deref(), Some("Po1"), "{port}");
        assert_eq!(s.mode, None, "{port}");
        assert_eq!(s.admin_up, Some(true), "{port}");
    }
    // 1/9 is outside the range; 1/32 is an MLAG member (not a port-channel LAG).
    let s = read("mellanox_mlnxos", "Eth1/9", f);
    assert_eq!(s.lag, None);
    let s = read("mellanox_mlnxos", "1/32", f);
    assert_eq!(s.lag, None);
    // A port-channel's settings are not a member port's.
    let s = read("mellanox_mlnxos", "Eth1/7", f);
    assert_eq!(s.access_vlan, None);
}

#[test]
fn onyx_output_that_is_not_a_running_config_is_refused() {
    let r = try_read(
        "mellanox_mlnxos",
        "Eth1/11",
        &["show_interfaces_switchport.json"],
    );
    assert!(r.is_err(), "{r:?}");
}

// ---- Cumulus Linux (NCLU): the kernel's bridge VLAN table --------------------------------

#[test]
fn cumulus_bridge_vlan_table_inherited_vids_and_pvid() {
    // NVIDIA's CL 4.4 page: swp1 inherits the bridge's VIDs 10 20 and gets PVID 1 (the
    // bridge's own, not a native VLAN anyone set); swp2 (bridge-allow-untagged no) has no
    // untagged VLAN at all.
    let f = &["doc_bridge_vlan_show.txt"];
    let s = read("cumulus", "swp1", f);
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(s.allowed_vlans, vlans(&[10, 20]));
    assert_eq!(s.native_vlan, None);
    let s = read("cumulus", "swp2", f);
    assert_eq!(s.allowed_vlans, vlans(&[10, 20]));
    assert_eq!(s.native_vlan, None);
    // Not a bridge port.
    let s = read("cumulus", "swp3", f);
    assert_eq!((s.mode, s.access_vlan), (None, None));
    // Link state and alias are not in the table: unread, never "verified".
    assert!(s.unread.contains("admin_up") && s.unread.contains("description"));
}

// ---- The older readers on real output ----------------------------------------------------

#[test]
fn ios_trunk_with_a_continued_allowed_list() {
    // `switchport trunk allowed vlan 101,...,702` continued by `... allowed vlan add
    // 801,802,901,902` (genieparser capture).
    let s = read(
        "cisco_ios",
        "Gi1/0/7",
        &["genie_show_running-config_interface_trunk_add.txt"],
    );
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(
        s.allowed_vlans,
        vlans(&[101, 102, 201, 202, 301, 302, 401, 402, 501, 502, 701, 702, 801, 802, 901, 902])
    );
    assert_eq!(s.description.as_deref(), Some("host interface"));
}

#[test]
fn ios_trunk_without_an_allowed_line_carries_every_vlan() {
    let s = read(
        "cisco_ios",
        "GigabitEthernet1/0/5",
        &["genie_show_running-config_interface_trunk_bare.txt"],
    );
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(s.allowed_vlans.len(), 4094);
}

#[test]
fn ios_four_space_indent_blank_lines_and_the_prompt_echo() {
    // Typed as `Gi1/0/13`, printed as `GigabitEthernet1/0/13`, body indented by four.
    let s = read(
        "cisco_ios",
        "Gi1/0/13",
        &["genie_show_running-config_interface_nonegotiate.txt"],
    );
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(70))
    );
    assert_eq!(s.description.as_deref(), Some("ISE Controlled Port"));
    assert_eq!(s.admin_up, Some(true));
}

#[test]
fn ios_routed_catalyst_9000_port_has_no_vlans() {
    let s = read(
        "cisco_ios",
        "Tw1/0/36",
        &["genie_show_running-config_interface_twogig.txt"],
    );
    assert_eq!(s.access_vlan, None);
    assert!(s.allowed_vlans.is_empty());
    assert_ne!(s.mode.as_deref(), Some("access"));
    assert_ne!(s.mode.as_deref(), Some("trunk"));
}

#[test]
fn nxos_stanzas_back_to_back_two_space_indent() {
    // No `!` between stanzas; the prompt echo first.
    let f = &["genie_show_running-config_interface_all.txt"];
    let s = read("cisco_nxos", "Ethernet1/1", f);
    assert_eq!(s.mtu, Some(9216));
    assert_eq!(s.description.as_deref(), Some("genie test"));
    assert_eq!(s.access_vlan, None);
    let s = read("cisco_nxos", "port-channel5", f);
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(s.native_vlan, Some(2253));
    assert_eq!(s.allowed_vlans, vlans(&[2253]));
}

#[test]
fn eos_access_port_without_a_mode_line_ignores_its_allowed_list() {
    // EOS prints no `switchport mode access`; the allowed list of an access port is inert.
    let f = &["show_running-config_section_interface.cfg"];
    let s = read("arista_eos", "Ethernet1", f);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(20))
    );
    assert!(s.allowed_vlans.is_empty());
    let s = read("arista_eos", "Et2", f);
    assert_eq!(s.mode.as_deref(), Some("trunk"));
    assert_eq!(s.native_vlan, Some(20));
}

#[test]
fn sonic_vlan_brief_continuation_rows_and_status_columns() {
    // sonic-utilities' own expected outputs: a VLAN's further rows leave the id empty;
    // the status table has more columns than the parser needs.
    let f = &[
        "show_vlan_brief.txt",
        "show_interfaces_status.txt",
        "show_interfaces_description.txt",
    ];
    let s = read("sonic", "Ethernet12", f);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(1000))
    );
    let s = read("sonic", "Ethernet28", f);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(2000))
    );
    assert_eq!(s.mtu, Some(9100));
    assert_eq!(s.admin_up, Some(true));
    assert_eq!(s.description.as_deref(), Some("ARISTA03T1:Ethernet28"));
    // A LAG member shows its PortChannel in the Vlan column.
    let s = read("sonic", "Ethernet32", f);
    assert_eq!(s.lag.as_deref(), Some("PortChannel1001"));
}

#[test]
fn os10_whole_running_config_with_breakout_lines() {
    // `interface breakout 1/1/1 map 40g-1x` lines start with `interface` too; the port's
    // own stanza is still found among them. OS10 prints `switchport access vlan 1` on
    // every L2 port and no mode line.
    let f = &["show_running-config"];
    let s = read("dell_os10", "ethernet1/1/3", f);
    assert_eq!(
        (s.mode.as_deref(), s.access_vlan),
        (Some("access"), Some(1))
    );
    assert_eq!(s.admin_up, Some(true));
    let s = read("dell_os10", "ethernet1/1/2", f);
    assert_eq!(s.access_vlan, None);
}

// ---- Dell N-series / OS6 (dell_powerconnect): unindented interface bodies -----------------

/// N-series prints interface bodies unindented, each stanza closed by `exit`.
#[test]
fn powerconnect_n_series_unindented_bodies() {
    let files = ["os6_config_config.cfg"];
    let s = read("dell_powerconnect", "Te1/0/9", &files);
    assert_eq!(s.access_vlan, Some(2), "{s:?}");
    assert!(s.allowed_vlans.is_empty(), "{s:?}");
    let s = read("dell_powerconnect", "Te1/0/1", &files);
    assert_eq!(s.description.as_deref(), Some("test_string"), "{s:?}");
    assert_eq!(s.access_vlan, None, "{s:?}");
    let s = read("dell_powerconnect", "Te1/0/2", &files);
    assert_eq!(s.admin_up, Some(true), "{s:?}");
    // A whole N4064F configuration: every stanza closed by `exit`, top-level blocks between.
    let files = ["os6_show_running-config"];
    let s = read("dell_powerconnect", "Te1/0/5", &files);
    assert_eq!((s.mode.as_deref(), s.access_vlan), (None, None), "{s:?}");
    assert!(s.allowed_vlans.is_empty(), "{s:?}");
    assert!(try_read("dell_powerconnect", "Te1/0/12", &files).is_err());
}

// ---- Nokia SR Linux: `info flat` -------------------------------------------------------

#[test]
fn srl_routed_port_in_the_default_instance_carries_no_vlan() {
    // learn-srlinux's leaf1: `ethernet-1/49 subinterface 0` with an IPv4 address, held by
    // `network-instance default` (no `type` line: the YANG default). Before, the reader took
    // every holding instance for a mac-vrf and refused this output ("its name ends in no
    // VLAN number").
    let f = &["docs_info_flat_leaf1.txt"];
    let s = read("nokia_srl", "ethernet-1/49", f);
    assert_eq!(s.mode, None);
    assert_eq!((s.access_vlan, s.native_vlan), (None, None));
    assert!(s.allowed_vlans.is_empty());
}

#[test]
fn srl_routed_subinterface_in_an_ip_vrf_is_not_vlan_one() {
    // learn-srlinux's L3 EVPN tutorial: `ethernet-1/1 subinterface 1` routed, held by
    // `network-instance tenant-1 type ip-vrf`. The old reader read the trailing `1` of
    // `tenant-1` as an access VLAN.
    let f = &[
        "docs_l3evpn_routed_subinterface.txt",
        "docs_l3evpn_ip_vrf.txt",
    ];
    let s = read("nokia_srl", "ethernet-1/1", f);
    assert_eq!((s.mode, s.access_vlan), (None, None));
    assert!(s.allowed_vlans.is_empty());
}

// ---- HPE Comware: `display vlan brief` (the VLAN table read before a port uses a VLAN) --

#[test]
fn comware_vlan_brief_ids_under_a_preamble_and_continued_member_rows() {
    // ntc-templates' capture: four preamble lines (`Default VLAN ID: 1` among them), the
    // `VLAN ID   Name   Port` header, VLAN 1's members continued on ten rows that start
    // with a port name, VLANs without members, no trailing newline.
    let catalog = Catalog::builtin().unwrap();
    let p = catalog.get("hpe_comware").unwrap();
    let Verify::Show(spec) = &p.verify else {
        panic!("hpe_comware has no reader");
    };
    assert_eq!(spec.vlan_table.as_deref(), Some("display vlan brief"));
    let ids =
        mercury::verify::parse::vlan_ids(spec, &fixture("hpe_comware", "display_vlan_brief.raw"))
            .unwrap();
    assert_eq!(ids, vlans(&[1, 10, 20, 30, 200, 500]));
}
