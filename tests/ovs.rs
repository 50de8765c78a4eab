//! The `ovs` platform against a real ovsdb-server and ovs-vswitchd (one private pair per
//! test, see `common/ovs.rs`), with Mercury running "on the card" (`transport = "local"`)
//! and through a `command` transport that hands each line to a shell, as an SSH exec channel
//! does. Every test asserts the OVSDB state afterwards, read with the harness's own
//! ovs-vsctl, not Mercury's.

mod common;
#[path = "common/ovs.rs"]
mod ovs_harness;

use std::time::{Duration, Instant};

use common::{Lab, Ran};
use ovs_harness::lab;

const NODE: &str = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123";

fn run(lab: &Lab, json: &str) -> Ran {
    lab.mercury(["--format", "json", "run"]).stdin(json).run()
}

fn plug(lab: &Lab, port: &str, vif: &str, extra: &str) -> Ran {
    run(
        lab,
        &format!(
            r#"{{"op":"plug_port","device":"dpu-7","port":"{port}","vif_id":"{vif}","reason":"test"{extra}}}"#
        ),
    )
}

fn op(lab: &Lab, op: &str, port: &str, extra: &str) -> Ran {
    run(
        lab,
        &format!(r#"{{"op":"{op}","device":"dpu-7","port":"{port}","reason":"test"{extra}}}"#),
    )
}

fn vlans(t: &str, tr: &str, m: &str) -> (String, String, String) {
    (t.to_string(), tr.to_string(), m.to_string())
}

/// Starts OVS or skips the test (outside CI, when Open vSwitch is not installed).
macro_rules! ovs_or_skip {
    () => {
        match ovs_harness::start() {
            Some(o) => o,
            None => return,
        }
    };
}

#[test]
fn plug_port_adds_the_representor_to_br_int_with_external_ids_and_tag() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    let v = plug(
        &lab,
        "pf0vf3",
        "vif-1",
        &format!(r#","mac":"AA:BB:CC:DD:EE:01","node_uuid":"{NODE}","vlan":120"#),
    )
    .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["platform"], "ovs");
    assert_eq!(ovs.bridge_of("pf0vf3"), "br-int");
    assert_eq!(ovs.iface_id("pf0vf3", "iface-id").as_deref(), Some("vif-1"));
    assert_eq!(
        ovs.iface_id("pf0vf3", "iface-status").as_deref(),
        Some("active")
    );
    assert_eq!(
        ovs.iface_id("pf0vf3", "attached-mac").as_deref(),
        Some("aa:bb:cc:dd:ee:01")
    );
    assert_eq!(ovs.iface_id("pf0vf3", "node-uuid").as_deref(), Some(NODE));
    assert_eq!(ovs.vlans("pf0vf3"), vlans("120", "[]", "access"));
    // One read, then ONE ovs-vsctl invocation carrying the whole change, then the read
    // back (read before write is the default).
    let cmds = v["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 3, "{v}");
    assert_eq!(cmds[0]["input"], cmds[2]["input"], "{v}");
    assert_eq!(v["verified"], true, "{v}");
    let write = cmds[1]["input"].as_str().unwrap();
    assert!(
        write.contains("-- --may-exist add-port br-int pf0vf3 --"),
        "{write}"
    );
    assert!(write.contains("tag=120"), "{write}");
    assert_eq!(v["data"]["ports"][0]["after"]["tag"], 120, "{v}");
    // The audit record names the change.
    let audit = lab.audit();
    let done = audit.last().unwrap();
    assert_eq!(done["how"]["changed"], true);
    assert_eq!(done["why"]["vif_id"], "vif-1");
}

#[test]
fn replug_is_idempotent_and_replug_with_new_values_is_declarative() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    let extra = format!(r#","mac":"aa:bb:cc:dd:ee:01","node_uuid":"{NODE}","vlan":120"#);
    plug(&lab, "pf0vf3", "vif-1", &extra).expect(0);
    let before = ovs.dump();
    let v = plug(&lab, "pf0vf3", "vif-1", &extra).expect(0);
    assert_eq!(v["changed"], false, "{v}");
    assert!(v["msg"].as_str().unwrap().contains("already"), "{v}");
    assert_eq!(
        v["commands"].as_array().unwrap().len(),
        1,
        "only the read: {v}"
    );
    assert_eq!(ovs.dump(), before);
    // Keys Mercury does not own are left alone.
    ovs.vsctl(&["set", "Interface", "pf0vf3", "external_ids:owner=ops"]);
    // A new VIF without MAC, node or VLAN: the port says exactly that afterwards.
    let v = plug(&lab, "pf0vf3", "vif-2", "").expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(ovs.iface_id("pf0vf3", "iface-id").as_deref(), Some("vif-2"));
    assert_eq!(ovs.iface_id("pf0vf3", "attached-mac"), None);
    assert_eq!(ovs.iface_id("pf0vf3", "node-uuid"), None);
    assert_eq!(ovs.iface_id("pf0vf3", "owner").as_deref(), Some("ops"));
    assert_eq!(ovs.vlans("pf0vf3"), vlans("[]", "[]", "[]"));
}

#[test]
fn unplug_removes_the_port_and_an_absent_port_is_success() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    plug(&lab, "pf0vf3", "vif-1", r#","vlan":120"#).expect(0);
    let v = lab
        .mercury([
            "--format",
            "json",
            "unplug-port",
            "--device",
            "dpu-7",
            "--port",
            "pf0vf3",
            "--reason",
            "test",
        ])
        .run()
        .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert!(!ovs.has_port("pf0vf3"));
    let v = op(&lab, "unplug_port", "pf0vf3", "").expect(0);
    assert_eq!(v["changed"], false, "{v}");
    assert!(v["msg"].as_str().unwrap().contains("absent"), "{v}");
    assert_eq!(v["data"]["ports"][0]["absent"], true, "{v}");
}

#[test]
fn access_trunk_native_detach_and_reset_on_an_ovs_port() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "default_vlan = 10");
    plug(&lab, "pf0vf3", "vif-1", "").expect(0);

    op(&lab, "attach_port", "pf0vf3", r#","vlan":120"#).expect(0);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("120", "[]", "access"));

    let v = op(
        &lab,
        "update_port",
        "pf0vf3",
        r#","mode":"trunk","native_vlan":110,"allowed_vlans":"120,130""#,
    )
    .expect(0);
    assert_eq!(v["changed"], true);
    assert_eq!(
        ovs.vlans("pf0vf3"),
        vlans("110", "[110, 120, 130]", "native-untagged")
    );

    // A tagged VLAN added to a trunk keeps its native VLAN.
    op(
        &lab,
        "attach_port",
        "pf0vf3",
        r#","vlan":140,"mode":"trunk""#,
    )
    .expect(0);
    assert_eq!(
        ovs.vlans("pf0vf3"),
        vlans("110", "[110, 120, 130, 140]", "native-untagged")
    );
    // Again: already there.
    let v = op(
        &lab,
        "attach_port",
        "pf0vf3",
        r#","vlan":140,"mode":"trunk""#,
    )
    .expect(0);
    assert_eq!(v["changed"], false, "{v}");

    op(
        &lab,
        "detach_port",
        "pf0vf3",
        r#","vlan":120,"mode":"trunk""#,
    )
    .expect(0);
    assert_eq!(
        ovs.vlans("pf0vf3"),
        vlans("110", "[110, 130, 140]", "native-untagged")
    );
    // Detaching the native VLAN leaves a plain trunk.
    op(&lab, "detach_port", "pf0vf3", r#","vlan":110"#).expect(0);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("[]", "[130, 140]", "trunk"));
    // A VLAN that is not there: nothing to do, said so.
    let v = op(&lab, "detach_port", "pf0vf3", r#","vlan":150"#).expect(0);
    assert_eq!(v["changed"], false, "{v}");
    assert!(v["msg"].as_str().unwrap().contains("not on pf0vf3"), "{v}");
    // The last VLAN leaves: the idle VLAN, never an empty trunks column (= every VLAN).
    op(&lab, "detach_port", "pf0vf3", r#","vlan":130"#).expect(0);
    op(&lab, "detach_port", "pf0vf3", r#","vlan":140"#).expect(0);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("10", "[]", "access"));

    op(
        &lab,
        "update_port",
        "pf0vf3",
        r#","mode":"access","native_vlan":150,"mtu":9000"#,
    )
    .expect(0);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("150", "[]", "access"));
    assert_eq!(ovs.get("Interface", "pf0vf3", "mtu_request"), "9000");
    let v = op(&lab, "reset_port", "pf0vf3", "").expect(0);
    assert_eq!(v["changed"], true);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("10", "[]", "access"));
    // external_ids are plug's business: untouched by port operations.
    assert_eq!(ovs.iface_id("pf0vf3", "iface-id").as_deref(), Some("vif-1"));
}

#[test]
fn detaching_the_last_vlan_without_an_idle_vlan_isolates_the_port() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    plug(&lab, "pf0vf3", "vif-1", r#","vlan":120"#).expect(0);
    op(&lab, "detach_port", "pf0vf3", r#","vlan":120"#).expect(0);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("4095", "[]", "access"));
    let v = op(&lab, "reset_port", "pf0vf3", "").expect(0);
    assert_eq!(v["changed"], false, "{v}");
}

#[test]
fn rejected_values_never_run_ovs_vsctl_and_leave_the_database_untouched() {
    let ovs = ovs_or_skip!();
    let wrapper = ovs.wrapper("vsctl", false);
    let lab = lab(&ovs, &format!("ovs_vsctl = [\"{}\"]", wrapper.display()));
    let before = ovs.dump();
    for (json, code) in [
        (r#","mac":"aa:bb:cc:dd:ee""#, 65),
        (r#","mac":"aa:bb:cc:dd:ee:ff -- del-br br-int""#, 65),
        (r#","bridge":"br-int;reboot""#, 65),
        (r#","bridge":"br-int -- del-br""#, 65),
        (r#","vlan":5000"#, 65),
        (r#","vlan":300"#, 77),
        (r#","node_uuid":"not-a-uuid""#, 65),
    ] {
        let r = plug(&lab, "pf0vf3", "vif-1", json);
        r.expect(code);
    }
    for (port, vif) in [
        ("pf0vf3 -- del-br br-int", "vif-1"),
        ("-pf0vf3", "vif-1"),
        ("pf0vf3isfartoolong", "vif-1"),
        ("br-int", "vif-1"),
        ("pf0vf3", "vif 1"),
        ("pf0vf3", "vif\\\"1"),
    ] {
        plug(&lab, port, vif, "").expect(65);
    }
    op(
        &lab,
        "update_port",
        "pf0vf3",
        r#","mode":"access","native_vlan":120,"description":"x""#,
    )
    .expect(65);
    assert!(
        ovs.wrapper_log("vsctl").is_empty(),
        "ovs-vsctl ran: {:?}",
        ovs.wrapper_log("vsctl")
    );
    assert_eq!(ovs.dump(), before);
    // The same wrapper does run for a valid request (the prefix is honoured).
    plug(&lab, "pf0vf3", "vif-1", "").expect(0);
    assert_eq!(ovs.wrapper_log("vsctl").len(), 3, "read, write, read back");
}

#[test]
fn a_failure_in_the_middle_of_the_transaction_applies_nothing() {
    let ovs = ovs_or_skip!();
    let wrapper = ovs.wrapper("vsctl-fail", true);
    let lab = lab(&ovs, &format!("ovs_vsctl = [\"{}\"]", wrapper.display()));
    let before = ovs.dump();
    // add-port and external_ids come first in the transaction, the tag after them, then the
    // injected command that fails: none of it may be committed.
    let v = plug(&lab, "pf0vf3", "vif-1", r#","vlan":120"#).expect(1);
    assert!(
        v["msg"].as_str().unwrap().contains("mercury-no-such-port"),
        "{v}"
    );
    assert!(!ovs.has_port("pf0vf3"));
    assert_eq!(ovs.dump(), before);
    let log = ovs.wrapper_log("vsctl-fail");
    assert_eq!(log.len(), 2, "one read and one write: {log:?}");
    assert!(
        log[1].contains("add-port") && log[1].contains("tag=120"),
        "{log:?}"
    );
    // The audit record says it failed.
    let audit = lab.audit();
    assert_eq!(audit.last().unwrap()["how"]["outcome"], "failed");
}

#[test]
fn plug_refuses_a_missing_bridge_and_a_port_on_another_bridge() {
    let ovs = ovs_or_skip!();
    ovs.add_bridge("br-ex");
    ovs.add_port("br-ex", "p0");
    // The network team lists the bridges requests may name; br-nope is listed but absent.
    let lab = lab(&ovs, "bridges = [\"br-int\", \"br-nope\"]");
    let before = ovs.dump();
    let v = plug(&lab, "pf0vf3", "vif-1", r#","bridge":"br-nope""#).expect(1);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("br-nope does not exist"),
        "{v}"
    );
    // The uplink (port C) on br-ex is never touched through br-int.
    let v = plug(&lab, "p0", "vif-1", "").expect(1);
    assert!(v["msg"].as_str().unwrap().contains("bridge br-ex"), "{v}");
    let v = op(&lab, "attach_port", "p0", r#","vlan":120"#).expect(1);
    assert!(v["msg"].as_str().unwrap().contains("br-ex"), "{v}");
    op(&lab, "unplug_port", "p0", "").expect(1);
    // A port that was never plugged cannot be attached.
    let v = op(&lab, "attach_port", "pf0vf9", r#","vlan":120"#).expect(1);
    assert!(
        v["msg"].as_str().unwrap().contains("plug_port it first"),
        "{v}"
    );
    assert_eq!(ovs.dump(), before);
    assert_eq!(v["commands"].as_array().unwrap().len(), 1, "read only: {v}");
}

#[test]
fn bridge_comes_from_the_request_then_the_device_then_br_int() {
    let ovs = ovs_or_skip!();
    ovs.add_bridge("br-dpu");
    let lab = lab(
        &ovs,
        "bridge = \"br-dpu\"\nbridges = [\"br-dpu\", \"br-int\"]",
    );
    plug(&lab, "pf0vf1", "vif-1", "").expect(0);
    assert_eq!(ovs.bridge_of("pf0vf1"), "br-dpu");
    plug(&lab, "pf0vf2", "vif-2", r#","bridge":"br-int""#).expect(0);
    assert_eq!(ovs.bridge_of("pf0vf2"), "br-int");
    // Port operations act on the device's bridge.
    op(&lab, "attach_port", "pf0vf1", r#","vlan":120"#).expect(0);
    op(&lab, "attach_port", "pf0vf2", r#","vlan":120"#).expect(1);
    op(&lab, "unplug_port", "pf0vf2", r#","bridge":"br-int""#).expect(0);
    assert!(!ovs.has_port("pf0vf2"));
}

#[test]
fn smartnic_link_resolves_the_card_by_hostname() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    // Ironic's SmartNIC local_link_connection: the card by hostname (an alias here), the
    // representor by port_id.
    let v = run(
        &lab,
        &format!(
            r#"{{"op":"plug_port","local_link_connection":{{"hostname":"dpu-7.dc1","port_id":"pf0vf3"}},
                "vif_id":"vif-1","node_uuid":"{NODE}","reason":"deploy node {NODE}"}}"#
        ),
    )
    .expect(0);
    assert_eq!(v["device"], "dpu-7");
    assert_eq!(ovs.bridge_of("pf0vf3"), "br-int");
    let v = run(
        &lab,
        r#"{"op":"is_link_valid","local_link_connection":{"hostname":"dpu-7","port_id":"pf0vf3"}}"#,
    )
    .expect(0);
    assert_eq!(v["data"]["valid"], true, "{v}");
    let v = run(
        &lab,
        r#"{"op":"is_port_supported","local_link_connection":{"hostname":"dpu-7","port_id":"pf0vf3"},
            "vnic_type":"smart-nic","is_smartnic":true}"#,
    )
    .expect(0);
    assert_eq!(v["data"]["supported"], true, "{v}");
    let v = run(
        &lab,
        r#"{"op":"get_allowed_network_types","local_link_connection":{"hostname":"dpu-7"}}"#,
    )
    .expect(0);
    assert_eq!(
        v["data"]["network_types"],
        serde_json::json!(["vlan", "flat"])
    );
    let v = run(
        &lab,
        r#"{"op":"unplug_port","local_link_connection":{"hostname":"dpu-7.dc1","port_id":"pf0vf3"},"reason":"r"}"#,
    )
    .expect(0);
    assert_eq!(v["changed"], true);
    assert!(!ovs.has_port("pf0vf3"));
}

#[test]
fn a_shell_behind_a_command_transport_gets_each_line_quoted() {
    // `command` transport: argv + [line], as `ssh host LINE` would hand LINE to a remote
    // shell. The shell here is local; the quoting is the same.
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "transport = \"command\"\nargv = [\"sh\", \"-c\"]");
    plug(
        &lab,
        "pf0vf3",
        "vif-1@tenant:a",
        &format!(r#","mac":"aa:bb:cc:dd:ee:01","node_uuid":"{NODE}","vlan":120"#),
    )
    .expect(0);
    assert_eq!(
        ovs.iface_id("pf0vf3", "iface-id").as_deref(),
        Some("vif-1@tenant:a")
    );
    op(
        &lab,
        "update_port",
        "pf0vf3",
        r#","mode":"trunk","native_vlan":110,"allowed_vlans":"120-122""#,
    )
    .expect(0);
    assert_eq!(
        ovs.vlans("pf0vf3"),
        vlans("110", "[110, 120, 121, 122]", "native-untagged")
    );
    op(&lab, "unplug_port", "pf0vf3", "").expect(0);
    assert!(!ovs.has_port("pf0vf3"));
}

#[test]
fn a_tcp_database_target_works_like_the_socket() {
    let ovs = ovs_or_skip!();
    let port = ovs.listen_tcp();
    let lab = lab(&ovs, &format!("ovs_db = \"tcp:127.0.0.1:{port}\""));
    let v = plug(&lab, "pf0vf3", "vif-1", r#","vlan":120"#).expect(0);
    assert!(
        v["commands"][1]["input"]
            .as_str()
            .unwrap()
            .starts_with(&format!("ovs-vsctl --db=tcp:127.0.0.1:{port} --timeout=9 ")),
        "{v}"
    );
    assert_eq!(ovs.vlans("pf0vf3"), vlans("120", "[]", "access"));
}

#[test]
fn dry_run_shows_the_transaction_and_touches_nothing() {
    let ovs = ovs_or_skip!();
    let wrapper = ovs.wrapper("vsctl", false);
    let lab = lab(&ovs, &format!("ovs_vsctl = [\"{}\"]", wrapper.display()));
    let before = ovs.dump();
    let v = lab
        .mercury([
            "--format",
            "json",
            "--dry-run",
            "plug-port",
            "--device",
            "dpu-7",
            "--port",
            "pf0vf3",
            "--vif-id",
            "vif-1",
            "--vlan",
            "120",
            "--reason",
            "test",
        ])
        .run()
        .expect(0);
    assert_eq!(v["dry_run"], true);
    let cmds = v["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 3, "read, transaction, read back: {v}");
    assert!(cmds[1]["input"]
        .as_str()
        .unwrap()
        .contains("add-port br-int pf0vf3"));
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("does not read OVSDB")));
    assert!(ovs.wrapper_log("vsctl").is_empty());
    assert_eq!(ovs.dump(), before);
}

#[test]
fn an_unreachable_database_is_exit_69() {
    let ovs = ovs_or_skip!();
    let missing = ovs.dir.path().join("nothing-here.sock");
    let lab = lab(&ovs, &format!("ovs_db = \"unix:{}\"", missing.display()));
    let v = plug(&lab, "pf0vf3", "vif-1", "").expect(69);
    assert!(v["msg"].as_str().unwrap().contains("OVSDB"), "{v}");
}

#[test]
fn without_ovs_vswitchd_a_write_times_out_with_exit_75_and_says_why() {
    let mut ovs = ovs_or_skip!();
    ovs.stop_vswitchd();
    let lab = lab(&ovs, "command_timeout = 2");
    let v = plug(&lab, "pf0vf3", "vif-1", "").expect(75);
    let msg = v["msg"].as_str().unwrap();
    assert!(msg.contains("ovs-vswitchd"), "{msg}");
    // ovs-vsctl gave up waiting for ovs-vswitchd, not for OVSDB: the transaction is in the
    // database, and a retry sees the port already as requested.
    assert!(ovs.has_port("pf0vf3"));
    let v = plug(&lab, "pf0vf3", "vif-1", "").expect(0);
    assert_eq!(v["changed"], false, "{v}");
}

#[test]
fn networks_need_nothing_on_ovs_and_lags_are_refused() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "manage_vlans = true");
    let before = ovs.dump();
    let v = run(
        &lab,
        r#"{"op":"add_network","device":"dpu-7","vlan":120,"reason":"r"}"#,
    )
    .expect(0);
    assert_eq!(v["changed"], false, "{v}");
    assert!(v["commands"].as_array().unwrap().is_empty());
    run(
        &lab,
        r#"{"op":"update_lag","device":"dpu-7","lag":"1","members":["p0","p1"],"reason":"r"}"#,
    )
    .expect(65);
    assert_eq!(ovs.dump(), before);
}

#[test]
fn a_representor_ovs_cannot_open_is_a_warning_unless_the_catalog_says_failure() {
    let ovs = ovs_or_skip!();
    let wrapper = ovs.wrapper_missing_device("vsctl-missing");
    let lab = lab(&ovs, &format!("ovs_vsctl = [\"{}\"]", wrapper.display()));
    let v = plug(&lab, "pf0vf3", "vif-1", "").expect(0);
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{v}");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains("could not open network device pf0vf3"),
        "{v}"
    );
    op(&lab, "unplug_port", "pf0vf3", "").expect(0);

    // A plugins.d copy of [platforms.ovs] with that line as a failure indicator.
    let builtin =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/plugins.toml")).unwrap();
    let section = &builtin[builtin.find("[platforms.ovs]\n").unwrap()..];
    let strict = section.replacen(
        "kind = \"ovsdb\"\n",
        "kind = \"ovsdb\"\nfailures = ['Error detected while setting up']\n",
        1,
    );
    std::fs::create_dir_all(lab.path("plugins.d")).unwrap();
    std::fs::write(lab.path("plugins.d/ovs-strict.toml"), strict).unwrap();
    common::set_mode(&lab.path("plugins.d/ovs-strict.toml"), 0o644);
    let v = plug(&lab, "pf0vf3", "vif-1", "").expect(1);
    let msg = v["msg"].as_str().unwrap();
    assert!(msg.contains("committed in OVSDB"), "{msg}");
    // As the message says: the port is there; the caller decides (unplug, or retry later).
    assert!(ovs.has_port("pf0vf3"));
}

#[test]
fn a_port_named_like_another_rows_uuid_prefix_never_reaches_that_row() {
    // ovs-vsctl falls back to UUID-prefix matching when no row has the name: Mercury looks
    // ports up by exact name and writes existing rows by their full UUID.
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    plug(&lab, "pf0vf3", "vif-1", r#","vlan":120"#).expect(0);
    let uuid = ovs.get("Port", "pf0vf3", "_uuid");
    let prefix = &uuid[..8];
    let before = ovs.dump();
    let v = op(&lab, "attach_port", prefix, r#","vlan":130"#).expect(1);
    assert!(
        v["msg"].as_str().unwrap().contains("plug_port it first"),
        "{v}"
    );
    op(&lab, "unplug_port", prefix, "").expect(0);
    assert_eq!(ovs.dump(), before);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("120", "[]", "access"));
}

#[test]
fn a_batch_of_ports_is_one_transaction_and_one_refusal_stops_all() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "default_vlan = 10");
    plug(&lab, "pf0vf1", "vif-1", "").expect(0);
    plug(&lab, "pf0vf2", "vif-2", "").expect(0);
    let v = run(
        &lab,
        r#"{"op":"attach_port","device":"dpu-7","ports":["pf0vf1",{"port":"pf0vf2","vlan":130}],
            "vlan":120,"reason":"r"}"#,
    )
    .expect(0);
    let cmds = v["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 3, "one read, one write, the read back: {v}");
    assert_eq!(ovs.vlans("pf0vf1"), vlans("120", "[]", "access"));
    assert_eq!(ovs.vlans("pf0vf2"), vlans("130", "[]", "access"));
    // pf0vf9 is not plugged: the request is refused as a whole, pf0vf1 keeps VLAN 120.
    let before = ovs.dump();
    run(
        &lab,
        r#"{"op":"attach_port","device":"dpu-7","ports":["pf0vf1","pf0vf9"],"vlan":150,"reason":"r"}"#,
    )
    .expect(1);
    assert_eq!(ovs.dump(), before);
}

/// A dry run is the real path in a session that records: against a card whose ports need
/// each change (as a dry run assumes: a detach finds the VLAN on an access port),
/// `--dry-run` shows exactly the lines the real run then sends, in order —
/// the read, the one transaction, and with `--verify` the read back. (A real run writes an
/// existing row by the UUID it just read, which a dry run cannot know: it names the row.)
#[test]
fn dry_run_lines_are_the_lines_a_real_run_sends() {
    let ovs = ovs_or_skip!();
    let lab = lab(
        &ovs,
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]",
    );
    let steps = [
        format!(
            r#"{{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1","mac":"aa:bb:cc:dd:ee:01","node_uuid":"{NODE}","vlan":120,"reason":"t"}}"#
        ),
        r#"{"op":"update_port","device":"dpu-7","port":"pf0vf3","mode":"trunk","native_vlan":110,"allowed_vlans":"120-121","reason":"t"}"#.into(),
        r#"{"op":"reset_port","device":"dpu-7","port":"pf0vf3","reason":"t"}"#.into(),
        r#"{"op":"attach_port","device":"dpu-7","port":"pf0vf3","vlan":130,"reason":"t"}"#.into(),
        r#"{"op":"detach_port","device":"dpu-7","port":"pf0vf3","vlan":130,"reason":"t","verify":true}"#.into(),
        r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","reason":"t","verify":true}"#.into(),
    ];
    for json in &steps {
        let dry = lab
            .mercury(["--format", "json", "--dry-run", "run"])
            .stdin(json)
            .run();
        let dry_v = dry.expect(0);
        let before = ovs.dump();
        let real = run(&lab, json);
        let real_v = real.expect(0);
        assert_eq!(real_v["changed"], true, "{json}: {real_v}");
        let by_name = |lines: Vec<String>| -> Vec<String> {
            let mut out = Vec::new();
            for l in lines {
                let words: Vec<String> = l
                    .split(' ')
                    .map(|w| {
                        let uuid = w.len() == 36 && w.chars().filter(|c| *c == '-').count() == 4;
                        if uuid {
                            "pf0vf3".to_string()
                        } else {
                            w.to_string()
                        }
                    })
                    .collect();
                out.push(words.join(" "));
            }
            out
        };
        assert_eq!(
            dry.inputs(),
            by_name(real.inputs()),
            "{json}: {dry_v}\n{real_v}"
        );
        assert_ne!(ovs.dump(), before, "{json}");
    }
    assert!(!ovs.has_port("pf0vf3"));
}

/// OVS requests that find the card locked ride the lock holder's session like every other
/// platform's: the holder reads and writes each waiter's port in its own run, and each
/// waiter gets its own lines and result.
#[test]
fn ovs_requests_coalesce_into_the_lock_holders_run() {
    let ovs = ovs_or_skip!();
    // A wrapper that holds every invocation while the gate file exists.
    let gate = ovs.dir.path().join("gate");
    let wrapper = ovs.dir.path().join("vsctl-gated");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nwhile [ -e '{}' ]; do sleep 0.02; done\nexec {} \"$@\"\n",
            gate.display(),
            ovs.vsctl.display()
        ),
    )
    .unwrap();
    common::set_mode(&wrapper, 0o755);
    let lab = lab(&ovs, &format!("ovs_vsctl = [\"{}\"]", wrapper.display()));
    let plug_child = |port: &str, vlan: u32, id: &str| {
        lab.mercury(["--format", "json", "run"])
            .stdin(&format!(
                r#"{{"op":"plug_port","device":"dpu-7","port":"{port}","vif_id":"vif-{port}","vlan":{vlan},"reason":"burst","request_id":"{id}"}}"#
            ))
            .spawn()
    };
    std::fs::write(&gate, "").unwrap();
    let holder = plug_child("pf0vf1", 101, "ovs-1");
    let lock = lab.path("locks/dpu-7.lock");
    let t = Instant::now();
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains("ovs-1")
    {
        assert!(t.elapsed() < Duration::from_secs(20), "no holder");
        std::thread::sleep(Duration::from_millis(10));
    }
    let waiters = [
        ("ovs-2", plug_child("pf0vf2", 102, "ovs-2")),
        ("ovs-3", plug_child("pf0vf3", 103, "ovs-3")),
    ];
    let spooled = || {
        std::fs::read_dir(lab.path("locks/dpu-7.spool"))
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".req"))
                    .count()
            })
            .unwrap_or(0)
    };
    let t = Instant::now();
    while spooled() < 2 {
        assert!(t.elapsed() < Duration::from_secs(20), "not spooled");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::remove_file(&gate).unwrap();
    let h = common::finish(holder).expect(0);
    assert_eq!(h["data"]["coalesced"]["role"], "holder", "{h}");
    let mut served: Vec<&str> = h["data"]["coalesced"]["served"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    served.sort();
    assert_eq!(served, ["ovs-2", "ovs-3"], "{h}");
    for (id, child) in waiters {
        let ran = common::finish(child);
        let v = ran.expect(0);
        assert_eq!(v["request_id"], id, "{v}");
        assert_eq!(v["changed"], true, "{v}");
        assert_eq!(v["data"]["coalesced"]["role"], "waiter", "{v}");
        assert_eq!(v["data"]["coalesced"]["holder_request_id"], "ovs-1", "{v}");
        // Its own read, its own transaction and its own read back, nobody else's.
        let inputs = ran.inputs();
        assert_eq!(inputs.len(), 3, "{inputs:?}");
        let port = format!("pf0vf{}", id.trim_start_matches("ovs-"));
        assert!(
            inputs[1].contains(&format!("add-port br-int {port}")),
            "{inputs:?}"
        );
    }
    for (port, tag) in [("pf0vf1", "101"), ("pf0vf2", "102"), ("pf0vf3", "103")] {
        assert_eq!(ovs.bridge_of(port), "br-int");
        assert_eq!(ovs.vlans(port), vlans(tag, "[]", "access"), "{port}");
    }
}

/// A caller may not plug onto, or unplug from, a bridge the device does not list (the
/// uplink bridge br-ex held a host port and its uplink was deleted this way).
#[test]
fn a_bridge_the_device_does_not_list_is_refused_for_plug_and_unplug() {
    let ovs = ovs_or_skip!();
    ovs.add_bridge("br-ex");
    ovs.add_port("br-ex", "p0");
    let lab = lab(&ovs, "");
    let before = ovs.dump();
    for (what, extra) in [
        (
            "plug_port",
            r#","vif_id":"vif-1","vlan":120,"bridge":"br-ex""#,
        ),
        ("unplug_port", r#","bridge":"br-ex""#),
    ] {
        let port = if what == "plug_port" { "pf0vf3" } else { "p0" };
        let v = op(&lab, what, port, extra).expect(77);
        assert!(
            v["msg"].as_str().unwrap().contains("devices.dpu-7.bridges"),
            "{what}: {v}"
        );
        assert_eq!(v["commands"].as_array().unwrap().len(), 0, "{v}");
    }
    assert_eq!(ovs.dump(), before);
    assert!(ovs.has_port("p0"));
}

/// A port plugged without a VLAN carries every VLAN of br-int: a caller limited to some
/// VLANs may not make one unless the device lists it in flat_ports.
#[test]
fn a_caller_may_not_plug_a_flat_port_unless_the_device_allows_it() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "");
    lab.append_config(
        "\n[callers.conductor]\ndevices = [\"dpu-7\"]\nallowed_vlans = [\"100-199\"]\n",
    );
    let before = ovs.dump();
    let serve = |cmd: &str| {
        lab.mercury(["serve-ssh", "--caller", "conductor"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
    };
    let v = serve("plug-port --device dpu-7 --port pf0vf3 --vif-id vif-1 --reason t").expect(77);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("devices.dpu-7.flat_ports"),
        "{v}"
    );
    assert_eq!(ovs.dump(), before);
    // With a VLAN it may.
    serve("plug-port --device dpu-7 --port pf0vf3 --vif-id vif-1 --vlan 120 --reason t").expect(0);
    assert_eq!(ovs.vlans("pf0vf3"), vlans("120", "[]", "access"));
    // Listed in flat_ports, it may plug one without.
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "[devices.dpu-7]\n",
        "[devices.dpu-7]\nflat_ports = [\"conductor\"]\n",
    ));
    serve("plug-port --device dpu-7 --port pf0vf4 --vif-id vif-2 --reason t").expect(0);
    assert_eq!(ovs.vlans("pf0vf4"), vlans("[]", "[]", "[]"));
}

/// Only ports Mercury plugged (marked in external_ids) are changed or unplugged: a patch
/// port or another agent's port on br-int is never touched.
#[test]
fn ports_mercury_did_not_plug_are_never_changed_or_unplugged() {
    let ovs = ovs_or_skip!();
    ovs.add_port("br-int", "patch-tun");
    ovs.vsctl(&[
        "set",
        "Interface",
        "patch-tun",
        "external_ids:iface-id=not-ours",
    ]);
    let lab = lab(&ovs, "");
    let before = ovs.dump();
    for (what, extra) in [
        ("unplug_port", ""),
        ("attach_port", r#","vlan":120"#),
        ("reset_port", ""),
        ("plug_port", r#","vif_id":"vif-1","vlan":120"#),
    ] {
        let v = op(&lab, what, "patch-tun", extra).expect(1);
        assert!(
            v["msg"]
                .as_str()
                .unwrap()
                .contains("not plugged by Mercury"),
            "{what}: {v}"
        );
    }
    assert_eq!(ovs.dump(), before);
    // A port Mercury plugged carries the mark, and unplugs.
    plug(&lab, "pf0vf3", "vif-1", r#","vlan":120"#).expect(0);
    assert_eq!(
        ovs.iface_id("pf0vf3", "plugged-by").as_deref(),
        Some("mercury")
    );
    op(&lab, "unplug_port", "pf0vf3", "").expect(0);
    assert!(!ovs.has_port("pf0vf3"));
}
