//! Verify mode end to end: the real `mercury` drives `mercury-sim` for every platform whose
//! catalog entry reads ports back, and each step runs with `--verify` — read before, change,
//! read after — so the show parser of every family is exercised against the simulator's
//! output of the state Mercury just produced. Drift is made three ways: a change made
//! behind Mercury's back (another request without `--verify`), the simulator's state file
//! edited by hand, and a device that accepts a line but applies something else (a wrapper
//! rewriting what reaches the simulator): the last must fail with exit 1.
//!
//! OVS (`ovs` platform) is verified against a real ovsdb-server; platforms that declare
//! verify unsupported are refused with exit 65 before any device contact.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "common/ovs.rs"]
mod ovs_harness;

use common::{Lab, SimDevice};
use serde_json::Value;

struct Spec {
    platform: &'static str,
    ports: [&'static str; 3],
    /// Trunks with a native VLAN are supported.
    native: bool,
    /// The simulator shows this platform's trunks in a form the vendor does not print
    /// (see the platform's comment): the trunk steps are skipped.
    trunk_sim_gap: bool,
    /// Removing one tagged VLAN cannot run on the simulator (tests/platforms.rs).
    untag_sim_gap: bool,
    /// LAG members (and the LAG interface's L2 settings) are checked; false where
    /// tests/platforms.rs says the simulator cannot run the platform's LAG step.
    lag: bool,
}

const fn spec(platform: &'static str, ports: [&'static str; 3]) -> Spec {
    Spec {
        platform,
        ports,
        native: true,
        trunk_sim_gap: false,
        untag_sim_gap: false,
        lag: true,
    }
}

fn lab(platform: &str, sim_args: &[&str], argv0: Option<&str>) -> Lab {
    let lab = Lab::with_defaults(
        &[SimDevice {
            extra: "shut_unused_ports = true",
            sim_args,
            ..SimDevice::new("leaf", platform)
        }],
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = true\n",
    );
    if let Some(wrapper) = argv0 {
        // Put a wrapper in front of the simulator's argv.
        let text = std::fs::read_to_string(&lab.config).unwrap();
        lab.write_config(&text.replace("argv = [", &format!("argv = [\"{wrapper}\", ")));
    }
    lab
}

fn run(lab: &Lab, args: &[&str]) -> common::Ran {
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(["--device", "leaf"]);
    if !args.contains(&"verify-port") {
        argv.extend(["--reason", "verify e2e"]);
    }
    lab.mercury(&argv).run()
}

fn verified(lab: &Lab, ctx: &str, args: &[&str]) -> Value {
    let mut argv = vec!["--verify"];
    argv.extend(args);
    let v = run(lab, &argv).expect(0);
    assert_eq!(v["data"]["verified"], true, "{ctx}: {v}");
    let diff = v["diff"]
        .as_array()
        .unwrap_or_else(|| panic!("{ctx}: no diff: {v}"));
    assert!(!diff.is_empty(), "{ctx}: {v}");
    v
}

/// The port's state after the change; results name ports canonically (`gi1/0/5` on
/// Sx300, `GigabitEthernet 0/5` on RGOS), whichever spelling the request used.
fn after<'a>(v: &'a Value, port: &str) -> &'a Value {
    let catalog = mercury::catalog::Catalog::builtin().unwrap();
    let platform = catalog
        .get(v["platform"].as_str().unwrap_or_default())
        .unwrap();
    let port = platform.canonical_port(port).unwrap();
    v["data"]["ports"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["port"] == port.as_str()))
        .map(|p| &p["after"])
        .unwrap_or_else(|| panic!("no port {port} in {v}"))
}

fn exercise(s: &Spec) {
    let lab = lab(s.platform, &[], None);
    let [p1, p2, p3] = s.ports;
    let ctx = |step: &str| format!("{}: {step}", s.platform);
    for v in ["10", "110", "120", "130", "131"] {
        run(
            &lab,
            &["add-network", "--vlan", v, "--name", &format!("t{v}")],
        )
        .expect(0);
    }

    // Access attach: read before, change, read after.
    let v = verified(
        &lab,
        &ctx("attach"),
        &["attach-port", "--port", p1, "--vlan", "120"],
    );
    assert_eq!(v["changed"], true, "{}: {v}", ctx("attach"));
    let a = after(&v, p1);
    assert_eq!(a["mode"], "access", "{}: {v}", ctx("attach"));
    assert_eq!(a["access_vlan"], 120, "{}: {v}", ctx("attach"));
    assert_ne!(a, &v["diff"][0]["before"], "{}: {v}", ctx("attach"));

    // The same again: already so, nothing sent, changed false.
    let before = lab.transcript("leaf").len();
    let v = verified(
        &lab,
        &ctx("again"),
        &["attach-port", "--port", p1, "--vlan", "120"],
    );
    assert_eq!(v["changed"], false, "{}: {v}", ctx("again"));
    // Skipped unless a requested field cannot be read (ovs_linux: the admin state that
    // shut_unused_ports asks for): then the change is sent again and reads back unchanged.
    let unread = v["data"]["ports"][0]["unverified"] != serde_json::json!([]);
    assert_eq!(v["data"]["skipped"], !unread, "{}: {v}", ctx("again"));
    let sent: Vec<String> = lab.transcript("leaf")[before..].to_vec();
    assert!(
        unread
            || !sent
                .iter()
                .any(|l| l.contains("120") && !l.contains("show")),
        "{}: {sent:?}",
        ctx("nothing sent")
    );

    // Check mode on another port: read and predict, nothing configured (every reading
    // platform; after a real change, so the device has state to compare).
    let before_check = lab.transcript("leaf").len();
    let state_before = lab.state("leaf")["running"].clone();
    let v = run(
        &lab,
        &["--check", "attach-port", "--port", p2, "--vlan", "120"],
    )
    .expect(0);
    assert_eq!(v["data"]["check"], true, "{}: {v}", ctx("check"));
    assert_eq!(v["changed"], true, "{}: {v}", ctx("check"));
    assert_eq!(
        v["diff"][0]["after"]["access_vlan"],
        120,
        "{}: {v}",
        ctx("check")
    );
    assert_eq!(
        lab.state("leaf")["running"],
        state_before,
        "{}: check mode changed the device",
        ctx("check")
    );
    let sent: Vec<String> = lab.transcript("leaf")[before_check..].to_vec();
    assert!(
        !sent
            .iter()
            .any(|l| l.contains("120") && !l.contains("show")),
        "{}: {sent:?}",
        ctx("check sent a change")
    );

    // Detach: idle VLAN back, port shut.
    let v = verified(
        &lab,
        &ctx("detach"),
        &["detach-port", "--port", p1, "--vlan", "120"],
    );
    assert_eq!(v["changed"], true, "{}: {v}", ctx("detach"));
    assert_eq!(after(&v, p1)["access_vlan"], 10, "{}: {v}", ctx("detach"));

    // Trunk with native VLAN, description and MTU where the platform has them.
    let catalog = mercury::catalog::Catalog::builtin().unwrap();
    let platform = catalog.get(s.platform).unwrap();
    if s.native && !s.trunk_sim_gap {
        let mut args = vec![
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
        if platform.supports("description") {
            args.extend(["--description", "node 7"]);
        }
        if platform.supports("mtu") {
            args.extend(["--mtu", "9000"]);
        }
        let v = verified(&lab, &ctx("trunk"), &args);
        let a = after(&v, p1);
        assert_eq!(a["mode"], "trunk", "{}: {v}", ctx("trunk"));
        assert_eq!(a["native_vlan"], 110, "{}: {v}", ctx("trunk"));

        // Tagged VLAN added and removed.
        let v = verified(
            &lab,
            &ctx("attach trunk"),
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
        assert!(
            after(&v, p1)["allowed_vlans"]
                .as_str()
                .unwrap()
                .contains("131"),
            "{}: {v}",
            ctx("attach trunk")
        );
        if !s.untag_sim_gap {
            verified(
                &lab,
                &ctx("detach trunk"),
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
            // The port is as declared: verify-port agrees.
            let v = run(
                &lab,
                &[
                    "verify-port",
                    "--port",
                    p1,
                    "--mode",
                    "trunk",
                    "--native-vlan",
                    "110",
                    "--allowed-vlans",
                    "120,130",
                ],
            )
            .expect(0);
            assert_eq!(v["data"]["in_state"], true, "{}: {v}", ctx("verify-port"));
            assert_eq!(v["changed"], false);
        }
    }

    // A LAG of p2 and p3, L2 settings on the LAG interface (which does not exist before).
    if s.lag {
        let lag = [
            "update-lag",
            "--lag",
            "7",
            "--member",
            p2,
            "--member",
            p3,
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120",
        ];
        let v = verified(&lab, &ctx("update-lag"), &lag);
        let ports = v["data"]["ports"].as_array().unwrap();
        assert_eq!(ports.len(), 3, "{}: {v}", ctx("update-lag"));
        assert_eq!(
            ports[0]["after"]["lag"],
            ports[2]["port"],
            "{}: {v}",
            ctx("update-lag")
        );
        // Refused by the device (IOS, VRP, NVUE: absent) or shown empty (Junos, SONiC, SR
        // Linux: no configuration).
        let b = &ports[2]["before"];
        assert!(
            b["absent"] == true || b["mode"].is_null(),
            "{}: {v}",
            ctx("update-lag")
        );
        assert_eq!(
            ports[2]["after"]["native_vlan"],
            110,
            "{}: {v}",
            ctx("update-lag")
        );
        let v = verified(
            &lab,
            &ctx("delete-lag"),
            &["delete-lag", "--lag", "7", "--member", p2, "--member", p3],
        );
        assert!(
            v["data"]["ports"][0]["after"]["lag"].is_null(),
            "{}: {v}",
            ctx("delete-lag")
        );
    }

    // Drift: another request (not verified) puts p2 in VLAN 130; verify-port expects 120.
    run(&lab, &["attach-port", "--port", p2, "--vlan", "130"]).expect(0);
    let r = run(
        &lab,
        &[
            "verify-port",
            "--port",
            p2,
            "--mode",
            "access",
            "--native-vlan",
            "120",
        ],
    );
    let v = r.expect(1);
    assert_eq!(v["error_kind"], "device_rejected", "{v}");
    assert_eq!(v["data"]["in_state"], false, "{}: {v}", ctx("drift"));
    let drift = &v["data"]["ports"][0]["drift"][0];
    assert_eq!(drift["field"], "access_vlan", "{}: {v}", ctx("drift"));
    assert_eq!(drift["actual"], 130, "{}: {v}", ctx("drift"));
    assert_eq!(v["diff"][0]["after"]["access_vlan"], 120, "{v}");
    // Without expectations it just reports.
    let v = run(&lab, &["verify-port", "--port", p2]).expect(0);
    assert_eq!(v["data"]["ports"][0]["state"]["access_vlan"], 130, "{v}");
    assert!(v["data"]["in_state"].is_null(), "{v}");
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

        /// Every platform that reads ports back is exercised here; the others declare why
        /// not, and are refused.
        #[test]
        fn every_verifying_platform_is_exercised() {
            let tested = [$(stringify!($platform)),*];
            let catalog = mercury::catalog::Catalog::builtin().unwrap();
            for name in catalog.names() {
                let p = catalog.get(name).unwrap();
                let reads = matches!(p.verify, mercury::catalog::Verify::Show(_));
                let ovsdb = name == "ovs";
                assert_eq!(reads && !ovsdb, tested.contains(&name), "{name}");
            }
        }
    };
}

platforms! {
    arista_eos => spec("arista_eos", ["Ethernet5", "Ethernet6", "Ethernet7"]);
    aruba_aoscx => spec("aruba_aoscx", ["1/1/5", "1/1/6", "1/1/7"]);
    // FastIron LAGs are not supported by the catalog.
    brocade_fastiron => Spec { lag: false, ..spec("brocade_fastiron", ["ethernet 1/1/5", "ethernet 1/1/6", "ethernet 1/1/7"]) };
    cisco_ios => spec("cisco_ios", ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6", "GigabitEthernet1/0/7"]);
    cisco_nxos => spec("cisco_nxos", ["Ethernet1/5", "Ethernet1/6", "Ethernet1/7"]);
    // Sx300 LACP (`channel-group N mode auto`) is unknown to the simulator (tests/platforms.rs).
    cisco_s300 => Spec { lag: false, ..spec("cisco_s300", ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6", "GigabitEthernet1/0/7"]) };
    // NCLU bonds are not read (the bridge table has no bond membership).
    cumulus => Spec { lag: false, ..spec("cumulus", ["swp5", "swp6", "swp7"]) };
    cumulus_nvue => spec("cumulus_nvue", ["swp5", "swp6", "swp7"]);
    // OS9 cannot make an untagged VLAN native on a tagged port (catalog: native_set) and
    // its port-channels are not supported yet.
    dell_force10 => Spec { native: false, lag: false, ..spec("dell_force10", ["TenGigabitEthernet 1/5", "TenGigabitEthernet 1/6", "TenGigabitEthernet 1/7"]) };
    dell_enterprise_sonic => spec("dell_enterprise_sonic", ["Ethernet20", "Ethernet24", "Ethernet28"]);
    dell_os10 => spec("dell_os10", ["ethernet1/1/5", "ethernet1/1/6", "ethernet1/1/7"]);
    // The simulator prints a PowerConnect general-mode trunk as `switchport mode hybrid` with
    // IOS trunk lines; PowerConnect prints `switchport mode general` and `switchport general
    // ...` lines, which is what the parser reads (unit tests), so trunks are not checked here.
    dell_powerconnect => Spec { trunk_sim_gap: true, lag: false, ..spec("dell_powerconnect", ["Gi1/0/5", "Gi1/0/6", "Gi1/0/7"]) };
    hpe_comware => spec("hpe_comware", ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6", "GigabitEthernet1/0/7"]);
    huawei => spec("huawei", ["GigabitEthernet0/0/5", "GigabitEthernet0/0/6", "GigabitEthernet0/0/7"]);
    huawei_vrpv8 => spec("huawei_vrpv8", ["GE1/0/5", "GE1/0/6", "GE1/0/7"]);
    juniper => spec("juniper", ["ge-0/0/5", "ge-0/0/6", "ge-0/0/7"]);
    mellanox_mlnxos => spec("mellanox_mlnxos", ["Eth1/5", "Eth1/6", "Eth1/7"]);
    nokia_srl => spec("nokia_srl", ["ethernet-1/5", "ethernet-1/6", "ethernet-1/7"]);
    // OVS bonds are not supported by the catalog.
    ovs_linux => Spec { lag: false, ..spec("ovs_linux", ["eth5", "eth6", "eth7"]) };
    // RGOS `port-group` is unknown to the simulator (tests/platforms.rs).
    // Netvisor trunks are created with all their ports in one command (no member steps).
    pluribus => Spec { lag: false, ..spec("pluribus", ["5", "6", "7"]) };
    ruijie => Spec { lag: false, ..spec("ruijie", ["GigabitEthernet0/5", "GigabitEthernet0/6", "GigabitEthernet0/7"]) };
    sonic => spec("sonic", ["Ethernet20", "Ethernet24", "Ethernet28"]);
    supermicro_smis => spec("supermicro_smis", ["Gi0/5", "Gi0/6", "Gi0/7"]);
}

/// A platform whose output is not parsed (every built-in one now is: a site catalog in
/// plugins.d that declares verify unsupported) is refused before the device is contacted,
/// with the catalog's reason; never "verified".
#[test]
fn platforms_without_a_parser_are_refused_with_the_reason() {
    let lab = lab("pluribus", &[], None);
    let builtin = include_str!("../plugins.toml");
    let mut text = String::new();
    let mut inside = false;
    for line in builtin.lines() {
        let t = line.trim_start_matches('[').trim_end_matches(']');
        if line.starts_with('[') {
            inside = t == "platforms.pluribus" || t.starts_with("platforms.pluribus.");
        }
        if inside {
            text.push_str(line);
            text.push('\n');
        }
    }
    let a = text.find("[platforms.pluribus.verify]").unwrap();
    let b = text.find("[platforms.pluribus.unsupported]").unwrap();
    text.replace_range(
        a..b,
        "[platforms.pluribus.verify]\nunsupported = \"this site has not checked its release\"\n\n",
    );
    let dir = lab.path("plugins.d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("site.toml"), text).unwrap();
    common::set_mode(&dir.join("site.toml"), 0o600);
    let v = run(
        &lab,
        &["--verify", "attach-port", "--port", "5", "--vlan", "120"],
    )
    .expect(65);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("verify is not supported on pluribus: this site has not checked its release"),
        "{v}"
    );
    run(&lab, &["verify-port", "--port", "5"]).expect(65);
    assert!(lab.transcript("leaf").is_empty(), "pluribus was contacted");
}

/// A JSON request asks for verification with `"verify": true`; verify_port needs no reason.
#[test]
fn json_requests_verify_too() {
    let lab = lab("cumulus_nvue", &[], None);
    for v in ["10", "120"] {
        run(&lab, &["add-network", "--vlan", v]).expect(0);
    }
    let v = lab
        .mercury(["run"])
        .stdin(r#"{"op":"attach_port","device":"leaf","port":"swp5","vlan":120,"reason":"r","verify":true}"#)
        .run()
        .expect(0);
    assert_eq!(v["data"]["verified"], true, "{v}");
    let v = lab
        .mercury(["run"])
        .stdin(r#"{"op":"verify_port","device":"leaf","port":"swp5","mode":"access","native_vlan":120}"#)
        .run()
        .expect(0);
    assert_eq!(v["data"]["in_state"], true, "{v}");
    // Over the SSH forced command, --verify is allowed.
    lab.append_config(
        "\n[callers.conductor]\ndevices = [\"leaf\"]\nallowed_vlans = [\"100-199\"]\n",
    );
    let v = lab
        .mercury(["serve-ssh", "--caller", "conductor"])
        .env(
            "SSH_ORIGINAL_COMMAND",
            "verify-port --device leaf --port swp5 --mode access --native-vlan 130",
        )
        .run()
        .expect(1);
    assert_eq!(v["data"]["in_state"], false, "{v}");
}

/// Operations that change no port have nothing to read back.
#[test]
fn verify_of_a_network_change_is_refused() {
    let lab = lab("cisco_ios", &[], None);
    let v = run(&lab, &["--verify", "add-network", "--vlan", "120"]).expect(65);
    assert!(
        v["msg"].as_str().unwrap().contains("changes no port"),
        "{v}"
    );
    let v = lab.mercury(["--verify", "get-switches"]).run().expect(65);
    assert!(v["msg"].as_str().unwrap().contains("verify_port"), "{v}");
}

/// A state changed on the device itself (the simulator's state file edited by hand) is
/// drift for verify-port, and `--verify` then sends the change that fixes it.
#[test]
fn hand_edited_device_state_is_drift() {
    let lab = lab("cisco_ios", &[], None);
    let port = "GigabitEthernet1/0/5";
    for v in ["10", "120", "130"] {
        run(&lab, &["add-network", "--vlan", v]).expect(0);
    }
    run(
        &lab,
        &["--verify", "attach-port", "--port", port, "--vlan", "120"],
    )
    .expect(0);
    let path = lab.path("leaf.json");
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    state["running"]["ports"][port]["access_vlan"] = 130.into();
    state["running"]["ports"][port]["description"] = "moved by hand".into();
    std::fs::write(&path, serde_json::to_string(&state).unwrap()).unwrap();
    let v = run(
        &lab,
        &[
            "verify-port",
            "--port",
            port,
            "--mode",
            "access",
            "--native-vlan",
            "120",
        ],
    )
    .expect(1);
    assert_eq!(
        v["data"]["ports"][0]["state"]["description"],
        "moved by hand"
    );
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("access_vlan expected 120, device shows 130"),
        "{v}"
    );
    // --verify sees the drift before and repairs it: changed is true again.
    let v = run(
        &lab,
        &["--verify", "attach-port", "--port", port, "--vlan", "120"],
    )
    .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["diff"][0]["before"]["access_vlan"], 130, "{v}");
    assert_eq!(lab.port("leaf", port)["access_vlan"], 120);
    // Audited as a read: a started and a finished record, nothing changed.
    let audit = lab.audit();
    let reads: Vec<&Value> = audit
        .iter()
        .filter(|r| r["what"]["op"] == "verify_port")
        .collect();
    assert!(reads.iter().any(|r| r["event"] == "started"), "{reads:#?}");
    let finished = reads
        .iter()
        .rev()
        .find(|r| r["event"] == "finished")
        .unwrap();
    assert_eq!(finished["how"]["changed"], false, "{finished}");
    assert_eq!(finished["how"]["rc"], 1, "{finished}");
}

/// A device that accepts a line but applies something else: the simulator behind a wrapper
/// that turns VLAN 120 into 130 (CLI: the wrapper echoes the line as typed; exec: the
/// command is rewritten). `--verify` reads the port back and fails with exit 1.
#[test]
fn a_change_the_device_accepted_but_did_not_apply_fails_with_exit_1() {
    let Some(python) = which("python3") else {
        eprintln!("python3 not found: skipped");
        return;
    };
    for (platform, port) in [
        ("cisco_ios", "GigabitEthernet1/0/5"),
        ("juniper", "ge-0/0/5"),
        ("cumulus_nvue", "swp5"),
        ("sonic", "Ethernet20"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = dir.path().join("rewrite");
        std::fs::write(
            &wrapper,
            format!(
                "#!{}\n{}",
                python.display(),
                REWRITE.replace(
                    "{exec}",
                    if matches!(platform, "cumulus_nvue" | "sonic") {
                        "True"
                    } else {
                        "False"
                    },
                )
            ),
        )
        .unwrap();
        common::set_mode(&wrapper, 0o755);
        let lab = lab(platform, &[], Some(&wrapper.display().to_string()));
        for v in ["10", "120", "130"] {
            run(&lab, &["add-network", "--vlan", v]).expect(0);
        }
        let r = run(
            &lab,
            &["--verify", "attach-port", "--port", port, "--vlan", "120"],
        );
        let v = r.expect(1);
        let msg = v["msg"].as_str().unwrap();
        assert!(
            msg.starts_with("verify: attach_port was accepted by leaf but"),
            "{platform}: {v}"
        );
        assert!(msg.contains("access_vlan expected 120"), "{platform}: {v}");
        assert_eq!(v["error_kind"], "device_rejected");
        // The port did change, if not as asked: a failed request that changed the device
        // says so.
        assert_eq!(v["changed"], true, "{v}");
        // The device has what it applied; without --verify the same request "succeeds".
        assert_eq!(lab.port("leaf", port)["access_vlan"], 130, "{platform}");
        run(
            &lab,
            &[
                "--no-verify",
                "attach-port",
                "--port",
                port,
                "--vlan",
                "120",
            ],
        )
        .expect(0);
    }
}

/// The rewriting wrapper: `rewrite SIM ARGS...`. For exec platforms the last argument is
/// the command: rewritten, then the simulator runs it. For CLI platforms the wrapper echoes
/// each line as typed (the simulator runs with `--echo off`) and hands on the rewritten one.
const REWRITE: &str = r#"
import subprocess, sys
EXEC = {exec}
def rewrite(s):
    # VLAN definitions pass unchanged (the switch has VLAN 120, which Mercury reads from
    # its VLAN table before using it); only the port's lines are rewritten.
    if "set vlans" in s or s.lstrip().startswith("vlan ") or "config vlan add" in s or "nv set bridge domain" in s:
        return s
    return s.replace(" 120", " 130")
argv = sys.argv[1:]
if EXEC:
    sys.exit(subprocess.call(argv[:-1] + [rewrite(argv[-1])]))
import collections, os, threading
# The simulator echoes each line when it reads it (lines typed ahead included); the echo of
# a rewritten line is put back as sent, so that Mercury sees its own line echoed.
p = subprocess.Popen(argv + ["--echo", "on"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
pending = collections.deque()
lock = threading.Lock()
def pump():
    buf = b""
    while True:
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            break
        buf += chunk
        out = b""
        while buf:
            with lock:
                head = pending[0] if pending else None
            if head is None:
                out, buf = out + buf, b""
                break
            new, orig = head
            i = buf.find(new)
            if i >= 0:
                out, buf = out + buf[:i] + orig, buf[i + len(new):]
                with lock:
                    pending.popleft()
                continue
            # Hold back only a tail that may be the start of the echo.
            k = next((n for n in range(min(len(new), len(buf)), 0, -1) if new.startswith(buf[-n:])), 0)
            out, buf = out + buf[:len(buf) - k], buf[len(buf) - k:]
            break
        os.write(1, out)
    os.write(1, buf)
t = threading.Thread(target=pump)
t.start()
for line in sys.stdin:
    sent = rewrite(line)
    with lock:
        pending.append((sent.rstrip("\n").encode() + b"\r\n", line.rstrip("\n").encode() + b"\r\n"))
    p.stdin.write(sent.encode())
    p.stdin.flush()
p.stdin.close()
code = p.wait()
t.join()
sys.exit(code)
"#;

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Dry runs show the reads around the change; verify-port's dry run shows only reads.
#[test]
fn dry_runs_show_the_reads() {
    let lab = lab("juniper", &[], None);
    let v = run(
        &lab,
        &[
            "--dry-run",
            "--verify",
            "attach-port",
            "--port",
            "ge-0/0/5",
            "--vlan",
            "120",
        ],
    )
    .expect(0);
    let inputs: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["input"].as_str().unwrap())
        .collect();
    let show = "show configuration interfaces ge-0/0/5 | display set";
    assert_eq!(
        inputs.iter().filter(|l| **l == show).count(),
        2,
        "{inputs:#?}"
    );
    let first_show = inputs.iter().position(|l| *l == show).unwrap();
    let configure = inputs
        .iter()
        .position(|l| *l == "configure private")
        .unwrap();
    let commit = inputs.iter().position(|l| *l == "commit").unwrap();
    let last_show = inputs.iter().rposition(|l| *l == show).unwrap();
    assert!(first_show < configure && commit < last_show, "{inputs:#?}");
    let v = run(&lab, &["--dry-run", "verify-port", "--port", "ge-0/0/5"]).expect(0);
    assert!(
        v["commands"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| !c["input"].as_str().unwrap().starts_with("set interfaces")),
        "{v}"
    );
    assert!(lab.transcript("leaf").is_empty());
}

// ---- OVS (`ovs` platform), against a real ovsdb-server ---------------------------------

macro_rules! ovs_or_skip {
    () => {
        match ovs_harness::start() {
            Some(o) => o,
            None => return,
        }
    };
}

fn ovs_run(lab: &Lab, json: &str) -> common::Ran {
    lab.mercury(["--format", "json", "--verify", "run"])
        .stdin(json)
        .run()
}

#[test]
fn ovs_plug_and_vlan_changes_are_read_back() {
    let ovs = ovs_or_skip!();
    let lab = ovs_harness::lab(&ovs, "");
    let v = ovs_run(
        &lab,
        r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1","vlan":120,"reason":"t"}"#,
    )
    .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["data"]["verified"], true, "{v}");
    // One read, the transaction, the read again.
    assert_eq!(v["commands"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(v["diff"][0]["after"]["tag"], 120, "{v}");
    assert!(v["diff"][0]["before"].is_null(), "{v}");
    let v = ovs_run(
        &lab,
        r#"{"op":"update_port","device":"dpu-7","port":"pf0vf3","mode":"trunk","native_vlan":110,"allowed_vlans":"120,130","reason":"t"}"#,
    )
    .expect(0);
    assert_eq!(v["diff"][0]["after"]["vlan_mode"], "native-untagged", "{v}");
    // verify-port compares the OVSDB port with the declaration.
    let v = lab
        .mercury([
            "verify-port",
            "--device",
            "dpu-7",
            "--port",
            "pf0vf3",
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "120,130",
        ])
        .run()
        .expect(0);
    assert_eq!(v["data"]["in_state"], true, "{v}");
    ovs.vsctl(&["set", "Port", "pf0vf3", "tag=130"]);
    let v = lab
        .mercury([
            "verify-port",
            "--device",
            "dpu-7",
            "--port",
            "pf0vf3",
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
        ])
        .run()
        .expect(1);
    assert_eq!(
        v["data"]["ports"][0]["drift"][0]["field"], "native_vlan",
        "{v}"
    );
}

/// ovs-vsctl behind a wrapper that commits tag 130 when asked for 120: the transaction
/// succeeds, the read-back does not match, exit 1.
#[test]
fn ovs_transaction_that_commits_something_else_fails_with_exit_1() {
    let ovs = ovs_or_skip!();
    let wrapper = ovs.dir.path().join("vsctl-rewrite");
    let vsctl = which("ovs-vsctl").unwrap();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in tag=120) set -- $(printf '%s\\n' \"$@\" | sed 's/^tag=120$/tag=130/'); break;; esac; done\nexec {} \"$@\"\n",
            vsctl.display()
        ),
    )
    .unwrap();
    common::set_mode(&wrapper, 0o755);
    let lab = ovs_harness::lab(&ovs, &format!("ovs_vsctl = [\"{}\"]", wrapper.display()));
    let v = ovs_run(
        &lab,
        r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1","vlan":120,"reason":"t"}"#,
    )
    .expect(1);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("OVSDB does not show it: pf0vf3: expected access VLAN 120"),
        "{v}"
    );
}

/// A Comware access port configured the device's way — ` port access vlan 10` with no
/// `port link-type` line, access being the default link type (HPE pyhpecw7
/// `Switchport.get_default`) — reads as access VLAN 10: verify-port agrees and a repeated
/// attach sends nothing. Before, the reader saw no mode and Mercury "changed" the port.
#[test]
fn comware_access_port_without_a_link_type_line_reads_as_access() {
    use std::io::Write;
    let port = "GigabitEthernet1/0/5";
    let lab = Lab::new(&[SimDevice::new("leaf", "hpe_comware")]);
    let mut sim = std::process::Command::new(common::sim_bin())
        .args([
            "--platform",
            "hpe_comware",
            "--hostname",
            "leaf",
            "--vlans",
            "10",
        ])
        .arg("--state")
        .arg(lab.path("leaf.json"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    sim.stdin
        .take()
        .unwrap()
        .write_all(
            format!("system-view\ninterface {port}\nport access vlan 10\nreturn\nquit\n")
                .as_bytes(),
        )
        .unwrap();
    let out = sim.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = lab
        .mercury([
            "verify-port",
            "--device",
            "leaf",
            "--port",
            port,
            "--mode",
            "access",
            "--native-vlan",
            "10",
        ])
        .run()
        .expect(0);
    assert_eq!(v["data"]["ports"][0]["state"]["mode"], "access", "{v}");
    let v = lab.attach("leaf", port, "10").run().expect(0);
    assert_eq!(v["changed"], false, "{v}");
    let sent: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["input"].as_str())
        .collect();
    assert!(
        !sent.contains(&"system-view"),
        "nothing to configure: {sent:?}"
    );
}
