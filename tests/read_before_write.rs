//! Read before write, the default: against `mercury-sim`, a request reads the ports it
//! changes, plans from what it read, sends nothing when they already are as requested, and
//! lets policy see what the change would take off a port before anything is sent. Each test
//! asserts the simulator's state, not only the exit code.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};
use serde_json::Value;

/// Lines of `commands` that change configuration (not paging, navigation, reads or the
/// session's goodbye).
fn config_lines(v: &Value) -> Vec<String> {
    v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["input"].as_str().unwrap().to_string())
        .filter(|l| {
            !l.starts_with("terminal ")
                && !l.starts_with("show ")
                && !matches!(
                    l.as_str(),
                    "configure terminal" | "end" | "exit" | "copy running-config startup-config"
                )
        })
        .collect()
}

fn ios_lab(extra_defaults: &str) -> Lab {
    Lab::with_defaults(
        &[SimDevice::new("leaf", "cisco_ios")],
        &format!(
            "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n{extra_defaults}"
        ),
    )
}

fn mercury_ok(lab: &Lab, args: &[&str]) -> Value {
    mercury_ok_code(lab, args, 0)
}

fn add_vlans(lab: &Lab, vlans: &[&str]) {
    for v in vlans {
        mercury_ok(lab, &["add-network", "--device", "leaf", "--vlan", v]);
    }
}

#[test]
fn a_repeated_attach_sends_no_configuration_line_and_is_unchanged() {
    let lab = ios_lab("");
    add_vlans(&lab, &["10", "120"]);
    let first = mercury_ok(
        &lab,
        &[
            "attach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
        ],
    );
    assert_eq!(first["changed"], true, "{first}");
    assert_eq!(first["verified"], true, "{first}");
    let saved = lab.state("leaf")["saved"].clone();
    let again = mercury_ok(
        &lab,
        &[
            "attach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
        ],
    );
    assert_eq!(again["changed"], false, "{again}");
    assert!(config_lines(&again).is_empty(), "{again}");
    assert!(
        again["msg"]
            .as_str()
            .unwrap()
            .contains("already in the requested state"),
        "{again}"
    );
    assert_eq!(lab.state("leaf")["saved"], saved, "nothing saved again");
    // Not read (--no-verify), the same request sends its lines and cannot know.
    let blind = mercury_ok(
        &lab,
        &[
            "--no-verify",
            "attach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
        ],
    );
    assert!(!config_lines(&blind).is_empty(), "{blind}");
    assert_eq!(blind["verified"], false, "{blind}");
}

/// A detach reads the port and takes the VLAN off where the port carries it: on a trunk it
/// leaves the tagged list (the request need not say `--mode trunk`), on an access port the
/// idle VLAN returns, and a VLAN the port does not carry sends nothing.
#[test]
fn a_detach_takes_the_vlan_off_wherever_the_port_carries_it() {
    let lab = ios_lab("");
    add_vlans(&lab, &["10", "120", "130"]);
    mercury_ok(
        &lab,
        &[
            "update-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/6",
            "--mode",
            "trunk",
            "--native-vlan",
            "10",
            "--allowed-vlans",
            "120,130",
        ],
    );
    let v = mercury_ok(
        &lab,
        &[
            "detach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/6",
            "--vlan",
            "130",
        ],
    );
    assert_eq!(v["changed"], true, "{v}");
    let port = lab.port("leaf", "GigabitEthernet1/0/6");
    assert_eq!(port["mode"], "trunk", "{port}");
    let allowed: Vec<u64> = port["allowed_vlans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert!(allowed.contains(&120) && !allowed.contains(&130), "{port}");
    let none = mercury_ok(
        &lab,
        &[
            "detach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/6",
            "--vlan",
            "199",
        ],
    );
    assert_eq!(none["changed"], false, "{none}");
    assert!(config_lines(&none).is_empty(), "{none}");
}

/// The network team's VLANs 300-305 on a trunk: a caller allowed 100-199 may not strip them
/// by resetting the port or by redeclaring it (both were applied). Nothing changes.
#[test]
fn removing_vlans_the_caller_may_not_use_is_refused_and_changes_nothing() {
    let lab = ios_lab("");
    lab.append_config(
        "\n[callers.conductor]\ndevices = [\"leaf\"]\nallowed_vlans = [\"100-199\"]\n",
    );
    // The network team (unscoped, with a device policy that covers its VLANs) builds the
    // trunk.
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "allowed_vlans = [\"10\", \"100-199\"]\n",
        "allowed_vlans = [\"10\", \"100-199\", \"300-305\"]\n",
    ));
    add_vlans(
        &lab,
        &["10", "150", "300", "301", "302", "303", "304", "305"],
    );
    mercury_ok(
        &lab,
        &[
            "update-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/7",
            "--mode",
            "trunk",
            "--native-vlan",
            "10",
            "--allowed-vlans",
            "300-305",
        ],
    );
    let before = lab.port("leaf", "GigabitEthernet1/0/7");
    let serve = |cmd: &str| {
        lab.mercury(["serve-ssh", "--caller", "conductor"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
    };
    for cmd in [
        "reset-port --device leaf --port Gi1/0/7 --reason teardown",
        "update-port --device leaf --port Gi1/0/7 --mode trunk --native-vlan 150 --reason t",
        "update-port --device leaf --port Gi1/0/7 --mode access --native-vlan 150 --reason t",
        "attach-port --device leaf --port Gi1/0/7 --vlan 150 --reason t",
    ] {
        let v = serve(cmd).expect(77);
        assert!(
            v["msg"].as_str().unwrap().contains("remove_vlans"),
            "{cmd}: {v}"
        );
        assert_eq!(lab.port("leaf", "GigabitEthernet1/0/7"), before, "{cmd}");
    }
    // Not read first, a scoped caller cannot be shown what it would remove: refused too.
    let v = serve("reset-port --no-verify --device leaf --port Gi1/0/7 --reason t").expect(77);
    assert!(v["msg"].as_str().unwrap().contains("not read first"), "{v}");
    assert_eq!(lab.port("leaf", "GigabitEthernet1/0/7"), before);
    // Wider removal rights than use rights: tear-down works after the team narrows
    // allowed_vlans.
    lab.append_config("remove_vlans = [\"100-199\", \"300-305\"]\n");
    serve("reset-port --device leaf --port Gi1/0/7 --reason teardown").expect(0);
    let after = lab.port("leaf", "GigabitEthernet1/0/7");
    assert_eq!(after["access_vlan"], 10, "{after}");
}

/// Removing the caller's own VLAN and the idle VLAN is always fine.
#[test]
fn a_caller_removes_its_own_vlans_and_the_idle_vlan() {
    let lab = ios_lab("");
    lab.append_config(
        "\n[callers.conductor]\ndevices = [\"leaf\"]\nallowed_vlans = [\"100-199\"]\n",
    );
    add_vlans(&lab, &["10", "120", "130"]);
    let serve = |cmd: &str| {
        lab.mercury(["serve-ssh", "--caller", "conductor"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
    };
    serve("attach-port --device leaf --port Gi1/0/8 --vlan 120 --reason deploy").expect(0);
    serve("attach-port --device leaf --port Gi1/0/8 --vlan 130 --reason move").expect(0);
    serve("detach-port --device leaf --port Gi1/0/8 --vlan 130 --reason teardown").expect(0);
    assert_eq!(lab.port("leaf", "GigabitEthernet1/0/8")["access_vlan"], 10);
}

fn junos_lab() -> Lab {
    Lab::with_defaults(
        &[SimDevice::new("leaf", "juniper")],
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
    )
}

/// The Junos VLAN table as the simulator holds it: name → id.
fn junos_vlans(lab: &Lab) -> std::collections::BTreeMap<String, u64> {
    let state = lab.state("leaf");
    state["running"]["vlans"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, v)| {
            (
                v["name"].as_str().unwrap_or_default().to_string(),
                id.parse().unwrap(),
            )
        })
        .collect()
}

/// Junos keys VLANs by name: `delete-network --vlan 150 --name netops-300` sent
/// `delete vlans netops-300` and deleted VLAN 300 for a caller allowed 100-199, and
/// `add-network --vlan 151 --name netops-301` renumbered VLAN 301. The id is what selects.
#[test]
fn a_vlan_name_never_selects_another_vlan_than_its_id() {
    let lab = junos_lab();
    // The network team's VLANs, named its way.
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "allowed_vlans = [\"10\", \"100-199\"]\n",
        "allowed_vlans = [\"10\", \"100-199\", \"300-301\"]\n",
    ));
    for (id, name) in [
        ("10", "idle"),
        ("300", "netops-300"),
        ("301", "netops-301"),
        ("150", "tenant-150"),
    ] {
        mercury_ok(
            &lab,
            &[
                "add-network",
                "--device",
                "leaf",
                "--vlan",
                id,
                "--name",
                name,
            ],
        );
    }
    lab.append_config(
        "\n[callers.conductor]\ndevices = [\"leaf\"]\nallowed_vlans = [\"100-199\"]\n",
    );
    let serve = |cmd: &str| {
        lab.mercury(["serve-ssh", "--caller", "conductor"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
    };
    let before = junos_vlans(&lab);
    assert_eq!(before.get("netops-300"), Some(&300), "{before:?}");
    // Deleting 150 under 300's name deletes 150 (its own entry), never 300.
    serve("delete-network --device leaf --vlan 150 --name netops-300 --reason t").expect(0);
    let after = junos_vlans(&lab);
    assert_eq!(after.get("netops-300"), Some(&300), "{after:?}");
    assert!(!after.values().any(|v| *v == 150), "{after:?}");
    // Again: nothing to delete, nothing sent.
    let v = serve("delete-network --device leaf --vlan 150 --name netops-300 --reason t").expect(0);
    assert_eq!(v["changed"], false, "{v}");
    // Creating 151 under 301's name would renumber 301: refused, nothing changes.
    let v = serve("add-network --device leaf --vlan 151 --name netops-301 --reason t").expect(65);
    assert!(
        v["msg"].as_str().unwrap().contains("belongs to VLAN 301"),
        "{v}"
    );
    assert_eq!(junos_vlans(&lab).get("netops-301"), Some(&301));
    // The idle VLAN and VLAN 1 are never deleted, whatever the name.
    serve("delete-network --device leaf --vlan 10 --name tenant-150 --reason t").expect(77);
    let v = mercury_ok_code(
        &lab,
        &["delete-network", "--device", "leaf", "--vlan", "1"],
        77,
    );
    assert!(v["msg"].as_str().unwrap().contains("never deleted"), "{v}");
    assert_eq!(junos_vlans(&lab).get("idle"), Some(&10));
}

/// One `platform` switch with `fault`, callers' defaults (idle VLAN 10, 100-199,
/// manage_vlans), `vlans` created and `port` attached to VLAN 120: the lab and the port as
/// the simulator holds it.
fn port_on_120(
    platform: &'static str,
    fault: &'static str,
    vlans: &[&str],
    port: &str,
) -> (Lab, Value) {
    let lab = Lab::with_defaults(
        &[SimDevice {
            sim_args: &["--fault", fault],
            ..SimDevice::new("leaf", platform)
        }],
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
    );
    for v in vlans {
        mercury_ok(&lab, &["add-network", "--device", "leaf", "--vlan", v]);
    }
    mercury_ok(
        &lab,
        &[
            "attach-port",
            "--device",
            "leaf",
            "--port",
            port,
            "--vlan",
            "120",
        ],
    );
    let before = lab.port("leaf", port);
    assert_eq!(before["access_vlan"], 120, "{before}");
    (lab, before)
}

fn mercury_ok_code(lab: &Lab, args: &[&str], code: i32) -> Value {
    let mut all = args.to_vec();
    all.extend(["--reason", "t"]);
    lab.mercury(all).run().expect(code)
}

/// VRP applies each line as it goes: `undo port default vlan` took effect before
/// `port default vlan 130` was refused (VLAN 130 does not exist), and the port had lost its
/// VLAN while the result said unchanged. Read first, Mercury puts the port back as it was
/// and says so; not read, it says the change is partly applied.
#[test]
fn a_refused_change_is_undone_when_the_port_was_read_first() {
    // The switch refuses the port's new VLAN after the old one is off (VRP applies each
    // line as it goes). Read first, Mercury creates the missing VLAN 130 (manage_vlans)
    // before the port uses it, so the refusal is a fault here, not the missing VLAN.
    let port = "GigabitEthernet0/0/7";
    let (lab, before) = port_on_120(
        "huawei",
        "reject=port default vlan 130",
        &["10", "120"],
        port,
    );
    let v = mercury_ok_code(
        &lab,
        &[
            "attach-port",
            "--device",
            "leaf",
            "--port",
            port,
            "--vlan",
            "130",
        ],
        1,
    );
    assert_eq!(v["partial"]["took_effect"], true, "{v}");
    assert_eq!(v["partial"]["restored"], true, "{v}");
    assert_eq!(v["changed"], false, "{v}");
    assert!(v["msg"].as_str().unwrap().contains("were undone"), "{v}");
    assert!(
        v["msg"].as_str().unwrap().contains("Unrecognized command"),
        "the device's own words: {v}"
    );
    assert_eq!(lab.port("leaf", port), before, "the port is as it was");
    // The VLAN created on demand for the change went with it: the device is as read.
    assert!(
        lab.state("leaf")["running"]["vlans"].get("130").is_none(),
        "{}",
        lab.state("leaf")["running"]["vlans"]
    );
    // Not read: the same refusal leaves the port changed, and the result says so.
    let v = mercury_ok_code(
        &lab,
        &[
            "--no-verify",
            "attach-port",
            "--device",
            "leaf",
            "--port",
            port,
            "--vlan",
            "130",
        ],
        1,
    );
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["partial"]["took_effect"], true, "{v}");
    assert!(v["partial"]["restored"].is_null(), "{v}");
    assert!(v["msg"].as_str().unwrap().contains("PARTLY APPLIED"), "{v}");
    assert_ne!(lab.port("leaf", port), before, "the port lost its VLAN");
    let audit = lab.audit();
    let last = audit.last().unwrap();
    assert_eq!(last["how"]["changed"], true, "{last}");
    assert_eq!(last["how"]["partial"], v["partial"], "{last}");
}

/// Check mode (Ansible's): connect, read, predict. The diff and `changed` are what the real
/// run then does, and no configuration line reaches the device.
#[test]
fn check_mode_predicts_the_change_and_sends_no_configuration_line() {
    let lab = ios_lab("");
    add_vlans(&lab, &["10", "120"]);
    mercury_ok(
        &lab,
        &["reset-port", "--device", "leaf", "--port", "Gi1/0/9"],
    );
    let before = lab.port("leaf", "GigabitEthernet1/0/9");
    let lines_before = lab.transcript("leaf").len();
    let args = [
        "attach-port",
        "--device",
        "leaf",
        "--port",
        "Gi1/0/9",
        "--vlan",
        "120",
    ];
    let mut check = vec!["--check"];
    check.extend(args);
    let v = mercury_ok(&lab, &check);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["data"]["check"], true, "{v}");
    assert_eq!(v["diff"][0]["after"]["access_vlan"], 120, "{v}");
    assert_eq!(v["diff"][0]["before"]["access_vlan"], 10, "{v}");
    assert!(config_lines(&v).is_empty(), "{v}");
    assert_eq!(lab.port("leaf", "GigabitEthernet1/0/9"), before);
    let sent: Vec<String> = lab.transcript("leaf")[lines_before..].to_vec();
    assert!(
        sent.iter()
            .all(|l| !l.starts_with("switchport") && l != "configure terminal"),
        "{sent:?}"
    );
    let audit = lab.audit();
    let finished = audit.last().unwrap();
    assert_eq!(finished["how"]["changed"], false, "{finished}");
    assert_eq!(finished["how"]["would_change"], true, "{finished}");
    // The real run does what check mode said.
    let real = mercury_ok(&lab, &args);
    assert_eq!(real["changed"], true);
    assert_eq!(
        real["diff"][0]["after"]["access_vlan"],
        v["diff"][0]["after"]["access_vlan"]
    );
    // Now nothing to do, and check mode says so.
    let again = mercury_ok(&lab, &check);
    assert_eq!(again["changed"], false, "{again}");
}

/// EOS changes go into a configuration session: a line the switch refuses is aborted with
/// the session, so nothing took effect even when the port was not read first (on
/// `configure terminal` the accepted lines before it stayed applied). A change that
/// succeeds is committed at once and saved.
#[test]
fn an_eos_change_refused_in_a_configuration_session_leaves_nothing() {
    let port = "Ethernet7";
    let (lab, before) = port_on_120(
        "arista_eos",
        "reject=switchport trunk allowed vlan",
        &["10", "120", "130"],
        port,
    );
    let inputs_before = lab.transcript("leaf").len();
    // Trunk mode is accepted, the tagged list refused: the whole session is aborted.
    let v = mercury_ok_code(
        &lab,
        &[
            "--no-verify",
            "update-port",
            "--device",
            "leaf",
            "--port",
            port,
            "--mode",
            "trunk",
            "--allowed-vlans",
            "120,130",
        ],
        1,
    );
    let sent: Vec<String> = lab.transcript("leaf")[inputs_before..].to_vec();
    assert!(sent.iter().any(|l| l == "configure session"), "{sent:?}");
    assert!(
        sent.iter().any(|l| l == "switchport mode trunk"),
        "{sent:?}"
    );
    assert!(sent.iter().any(|l| l == "abort"), "{sent:?}");
    assert!(!sent.iter().any(|l| l == "commit"), "{sent:?}");
    assert_eq!(v["changed"], false, "{v}");
    assert_eq!(v["partial"]["took_effect"], false, "{v}");
    assert!(
        !v["msg"].as_str().unwrap().contains("PARTLY APPLIED"),
        "{v}"
    );
    assert_eq!(lab.port("leaf", port), before, "the port is as it was");
    // A change that holds is committed and saved.
    mercury_ok(
        &lab,
        &[
            "attach-port",
            "--device",
            "leaf",
            "--port",
            port,
            "--vlan",
            "130",
        ],
    );
    let state = lab.state("leaf");
    assert_eq!(
        state["running"]["ports"][port]["access_vlan"], 130,
        "{state}"
    );
    assert_eq!(state["saved"]["ports"][port]["access_vlan"], 130, "{state}");
}

/// Issue 18: on a `type_ahead` CLI (IOS) an interface block's body and `exit` go in one
/// write once the `interface` line's prompt shows the sub-mode, so the lines after a
/// refused one have run on the device by the time its refusal is read. The result lists
/// exactly what the device accepted, those lines included: read first, the port is put
/// back as read (the access VLAN set after the refused mode line is undone); not read,
/// the port keeps what the device ran, and the result, the audit record and the device
/// agree on it. No further block follows a refused one.
#[test]
fn a_refused_line_inside_a_typed_ahead_block_lists_the_lines_run_after_it() {
    let lab = Lab::with_defaults(
        &[SimDevice {
            sim_args: &["--fault", "reject=switchport mode access"],
            ..SimDevice::new("leaf", "cisco_ios")
        }],
        "allowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
    );
    add_vlans(&lab, &["120", "130"]);
    let port = "GigabitEthernet1/0/8";
    let before = lab.port("leaf", port);
    assert!(before["access_vlan"].is_null(), "{before}");
    let attach = |vlan: &str, extra: &[&'static str], ports: &[&'static str]| {
        let mut args = extra.to_vec();
        args.extend(["attach-port", "--device", "leaf"]);
        for p in ports {
            args.extend(["--port", p]);
        }
        args.extend(["--vlan", vlan]);
        mercury_ok_code(&lab, &args, 1)
    };

    // Read first: `switchport mode access` refused, `switchport access vlan 120` and
    // `exit` after it in the same write ran; the restore undoes the VLAN.
    let v = attach("120", &[], &[port]);
    let p = &v["partial"];
    assert_eq!(p["rejected"], "switchport mode access", "{v}");
    assert_eq!(
        p["accepted"],
        serde_json::json!([
            format!("interface {port}"),
            "switchport access vlan 120",
            "exit"
        ]),
        "{v}"
    );
    assert!(
        p.get("in_flight").is_none() && p.get("unconfirmed").is_none(),
        "{v}"
    );
    assert_eq!(p["took_effect"], true, "{v}");
    assert_eq!(p["restored"], true, "{v}");
    assert_eq!(v["changed"], false, "{v}");
    assert_eq!(v["error_kind"], "device_rejected", "{v}");
    assert_eq!(lab.port("leaf", port), before, "put back as read");

    // Not read, two ports: a line of the first block is refused; the device ran the rest
    // of that block (the port is in VLAN 130 now) and never saw the second block.
    let sent_before = lab.transcript("leaf").len();
    let v = attach(
        "130",
        &["--no-verify"],
        &["GigabitEthernet1/0/8", "GigabitEthernet1/0/9"],
    );
    let p = &v["partial"];
    assert_eq!(p["rejected"], "switchport mode access", "{v}");
    let accepted: Vec<&str> = p["accepted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(accepted[0], format!("interface {port}"), "{v}");
    assert!(accepted.contains(&"switchport access vlan 130"), "{v}");
    assert_eq!(accepted.last(), Some(&"exit"), "{v}");
    assert_eq!(v["changed"], true, "{v}");
    assert!(v["msg"].as_str().unwrap().contains("PARTLY APPLIED"), "{v}");
    assert_eq!(
        lab.port("leaf", port)["access_vlan"],
        130,
        "the device ran it"
    );
    let sent = &lab.transcript("leaf")[sent_before..];
    assert!(
        !sent.iter().any(|l| l.contains("1/0/9")),
        "no block after a refused one: {sent:?}"
    );
    let audit = lab.audit();
    let last = audit.last().unwrap();
    assert_eq!(last["how"]["partial"], v["partial"], "{last}");
    assert_eq!(last["how"]["changed"], true, "{last}");
}
