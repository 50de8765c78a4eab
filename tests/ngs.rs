//! `mercury import-ngs` on networking-generic-switch configuration files written from NGS's
//! own documented examples (doc/source/configuration.rst: the Cisco IOS, Arista EOS and
//! Juniper sections, the shared `ngs_*` options, `[ngs_coordination]`), then Mercury run on
//! the imported configuration against the simulator behind a real OpenSSH sshd — the
//! password from the NGS file logs in, read from the secret file the import wrote.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;

use common::sshd::SshdOptions;
use common::{mercury, Lab};

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn import_writes_config_and_secret_files_and_reports_what_has_no_equivalent() {
    let dir = tempfile::tempdir().unwrap();
    let ini = dir.path().join("ml2_conf_genericswitch.ini");
    std::fs::write(
        &ini,
        "[ml2]\nmechanism_drivers = openvswitch,genericswitch\n\n\
         [ngs_coordination]\nbackend_url = etcd3+http://192.0.2.5:2379?api_version=v3\n\n\
         # for the Cisco IOS device:\n\
         [genericswitch:sw-hostname]\ndevice_type = netmiko_cisco_ios\n\
         ngs_mac_address = 00:53:00:0a:0b:0c\nusername = admin\npassword = password-Ios-1\n\
         secret = secret-Ios-2\nip = 192.0.2.10\nngs_allowed_vlans = 100,101\n\
         ngs_trunk_ports = Port-channel1\nngs_physical_networks = physnet1\n\n\
         [genericswitch:arista-hostname]\ndevice_type = netmiko_arista_eos\n\
         ngs_mac_address = 00:53:00:0a:0b:0d\nip = 192.0.2.11\nusername = admin\n\
         key_file = /opt/data/arista_key\n\n\
         [genericswitch:hostname-for-juniper]\ndevice_type = netmiko_juniper\nip = 192.0.2.12\n\
         username = admin\npassword = password-Junos-3\nngs_commit_timeout = 60\n\
         ngs_commit_interval = 5\n\n\
         [genericswitch:oc-switch]\ndevice_type = netconf_openconfig\nhost = 192.0.2.13\n\
         username = admin\npassword = password-Netconf-4\n",
    )
    .unwrap();
    let out = dir.path().join("etc-mercury");
    let r = mercury([
        "import-ngs".as_ref(),
        ini.as_os_str(),
        "--out-dir".as_ref(),
        out.as_os_str(),
    ])
    .run();
    let v = r.expect(0);
    for secret in [
        "password-Ios-1",
        "secret-Ios-2",
        "password-Junos-3",
        "password-Netconf-4",
    ] {
        assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
    }
    let toml = std::fs::read_to_string(out.join("mercury.toml")).unwrap();
    assert!(!toml.contains("password-"), "{toml}");
    assert_eq!(
        v["data"]["devices"],
        serde_json::json!(["arista-hostname", "hostname-for-juniper", "sw-hostname"])
    );
    assert_eq!(v["data"]["skipped"], serde_json::json!(["oc-switch"]));
    let keys: Vec<String> = v["data"]["unmapped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"].as_str().unwrap().to_string())
        .collect();
    for k in [
        "ngs_trunk_ports",
        "ngs_physical_networks",
        "ngs_commit_timeout",
        "ngs_commit_interval",
        "device_type",
        "ngs_allowed_vlans",
    ] {
        assert!(keys.iter().any(|x| x == k), "{k} not reported: {keys:?}");
    }
    // Secret files: one per secret, mode 0600 in a 0700 directory; the config 0600.
    assert_eq!(
        std::fs::read_to_string(out.join("secrets/sw-hostname.password")).unwrap(),
        "password-Ios-1\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("secrets/sw-hostname.enable")).unwrap(),
        "secret-Ios-2\n"
    );
    assert_eq!(mode(&out.join("secrets/sw-hostname.password")), 0o600);
    assert_eq!(mode(&out.join("secrets")), 0o700);
    assert_eq!(mode(&out.join("mercury.toml")), 0o600);
    // The result loads: get-switches lists the imported devices and their MACs.
    let cfg = out.join("mercury.toml");
    let v = mercury([
        "--config".as_ref(),
        cfg.as_os_str(),
        "get-switches".as_ref(),
    ])
    .run()
    .expect(0);
    let switches = v["data"]["switches"].as_array().unwrap();
    assert_eq!(switches.len(), 3);
    assert_eq!(switches[2]["mac"], "00:53:00:0a:0b:0c");
    assert_eq!(switches[2]["allowed_vlans"], "100,101");
    // A second import does not overwrite without --force.
    let again = mercury([
        "import-ngs".as_ref(),
        ini.as_os_str(),
        "--out-dir".as_ref(),
        out.as_os_str(),
    ])
    .run()
    .expect(78);
    assert!(
        again["msg"].as_str().unwrap().contains("--force"),
        "{again}"
    );
    // --dry-run writes nothing and shows the file.
    let dry = dir.path().join("dry");
    let v = mercury([
        "--dry-run".as_ref(),
        "import-ngs".as_ref(),
        ini.as_os_str(),
        "--out-dir".as_ref(),
        dry.as_os_str(),
    ])
    .run()
    .expect(0);
    assert!(!dry.exists());
    assert!(v["data"]["toml"]
        .as_str()
        .unwrap()
        .contains("[devices.sw-hostname]"));
}

#[test]
fn unreadable_or_malformed_ngs_files_are_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.ini");
    std::fs::write(&bad, "[genericswitch:a]\ndevice_type netmiko_cisco_ios\n").unwrap();
    let v = mercury(["import-ngs".as_ref(), bad.as_os_str()])
        .run()
        .expect(78);
    assert!(v["msg"].as_str().unwrap().contains("bad.ini:2"), "{v}");
    mercury(["import-ngs", "/nonexistent/ngs.ini"])
        .run()
        .expect(78);
}

#[test]
fn the_imported_config_runs_against_the_simulator_over_ssh() {
    require_sshd!();
    let password = common::sshd::ensure_password_user();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for(
        "sw-hostname",
        "cisco_ios",
        &[],
        SshdOptions {
            passwords: true,
            extra: "KbdInteractiveAuthentication no".into(),
            ..SshdOptions::default()
        },
    );
    let ini = lab.path("ngs.ini");
    std::fs::write(
        &ini,
        format!(
            "[genericswitch:sw-hostname]\ndevice_type = netmiko_cisco_ios\n\
             ngs_mac_address = 00:53:00:0a:0b:0c\nusername = {}\npassword = {password}\n\
             ip = 127.0.0.1\nport = {}\nngs_allowed_vlans = 10,120\nngs_port_default_vlan = 10\n",
            common::sshd::PASSWORD_USER,
            sshd.port
        ),
    )
    .unwrap();
    let out = lab.path("imported");
    mercury([
        "import-ngs".as_ref(),
        ini.as_os_str(),
        "--out-dir".as_ref(),
        out.as_os_str(),
    ])
    .run()
    .expect(0);
    let cfg = out.join("mercury.toml");
    // The operator's remaining steps: the switch's host key, and paths for this host.
    std::fs::write(
        out.join("known_hosts"),
        format!("{}\n", sshd.known_hosts_line()),
    )
    .unwrap();
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(
            "/run/mercury/locks",
            &lab.path("locks").display().to_string(),
        )
        .replace(
            "/var/log/mercury/audit.log",
            &lab.path("audit.log").display().to_string(),
        );
    std::fs::write(&cfg, text).unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--config", cfg.to_str().unwrap()];
        all.extend_from_slice(args);
        mercury(all).run()
    };
    run(&["check"]).expect(0);
    for vlan in ["10", "120"] {
        run(&[
            "add-network",
            "--device",
            "sw-hostname",
            "--vlan",
            vlan,
            "--reason",
            "ngs",
        ])
        .expect(0);
    }
    // Ironic's switch_id (the NGS ngs_mac_address) finds the device.
    let r = run(&[
        "attach-port",
        "--switch-id",
        "00:53:00:0a:0b:0c",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "migrated from NGS",
    ]);
    let v = r.expect(0);
    assert_eq!(v["device"], "sw-hostname");
    assert!(!r.stdout.contains(&password));
    assert_eq!(
        lab.settled_port("sw-hostname", "GigabitEthernet1/0/5")["access_vlan"],
        120
    );
    // A VLAN NGS did not allow is refused, as NGS would have.
    run(&[
        "attach-port",
        "--device",
        "sw-hostname",
        "--port",
        "Gi1/0/6",
        "--vlan",
        "130",
        "--reason",
        "x",
    ])
    .expect(77);
}
