//! Round trips per operation per platform, counted by the device: a regression guard for
//! the cost of a change that is not a timing test.
//!
//! The simulator's transcript records every line it receives, and whether it had to wait
//! for it (`waited`: nothing of the line had arrived when its CLI asked for the next one)
//! or found it typed ahead behind the previous line. On a CLI a line waited for is one
//! round trip; lines Mercury pipelines (the reads and navigation of a `type_ahead`
//! platform, sent in one batch) cost one together. On an exec platform each exec channel is
//! one round trip (one session of the simulator), however many lines it runs (a joined
//! read of an `exec_shell` platform runs several). For every platform of the catalog this runs the
//! operations Ironic uses most — create a VLAN, attach a port (access), detach it — with
//! read before write (the default) and with `--no-verify`, and compares lines received
//! and round trips with the snapshot `tests/snapshots/round_trips__round_trips.snap`. A
//! change that adds a line or a wait to any of them (a prompt probe, a second visit to
//! config mode, a read that needs a mode change) fails here until the snapshot is reviewed
//! and accepted. The device's count is also checked against the `round_trips` Mercury
//! reports (which counts the wait for the login prompt, not the final `exit`).
//!
//! The table's last column is what read before write costs over a plain write, in round
//! trips; issues 14 and 18 want it at most 1 where the CLI allows, and
//! the test asserts it on every `type_ahead` platform.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};

/// Every platform with a simulator, and two of its ports.
const PLATFORMS: &[(&str, [&str; 2])] = &[
    ("arista_eos", ["Ethernet5", "Ethernet6"]),
    ("aruba_aoscx", ["1/1/5", "1/1/6"]),
    ("brocade_fastiron", ["ethernet1/1/5", "ethernet1/1/6"]),
    (
        "cisco_ios",
        ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6"],
    ),
    ("cisco_nxos", ["Ethernet1/5", "Ethernet1/6"]),
    (
        "cisco_s300",
        ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6"],
    ),
    ("cumulus", ["swp5", "swp6"]),
    ("cumulus_nvue", ["swp5", "swp6"]),
    ("dell_enterprise_sonic", ["Ethernet20", "Ethernet24"]),
    (
        "dell_force10",
        ["TenGigabitEthernet1/5", "TenGigabitEthernet1/6"],
    ),
    ("dell_os10", ["ethernet1/1/5", "ethernet1/1/6"]),
    ("dell_powerconnect", ["Gi1/0/5", "Gi1/0/6"]),
    (
        "hpe_comware",
        ["GigabitEthernet1/0/5", "GigabitEthernet1/0/6"],
    ),
    ("huawei", ["GigabitEthernet0/0/5", "GigabitEthernet0/0/6"]),
    ("huawei_vrpv8", ["GE1/0/5", "GE1/0/6"]),
    ("juniper", ["ge-0/0/5", "ge-0/0/6"]),
    ("mellanox_mlnxos", ["Eth1/5", "Eth1/6"]),
    ("nokia_srl", ["ethernet-1/5", "ethernet-1/6"]),
    ("ovs_linux", ["eth5", "eth6"]),
    ("pluribus", ["5", "6"]),
    ("ruijie", ["GigabitEthernet0/5", "GigabitEthernet0/6"]),
    ("sonic", ["Ethernet20", "Ethernet24"]),
    ("supermicro_smis", ["Gi0/5", "Gi0/6"]),
];

/// What the device counted for one operation.
#[derive(Clone, Copy)]
struct Count {
    /// Lines received.
    lines: usize,
    /// Round trips, by the device: lines it had to wait for (CLI), exec channels (exec).
    waits: usize,
    /// Mercury's own `round_trips`.
    reported: usize,
}

/// Runs one operation and returns what the device received for it.
fn measure(lab: &Lab, exec: bool, seen: &mut usize, args: &[&str]) -> Count {
    let mut argv = args.to_vec();
    argv.extend(["--device", "leaf", "--reason", "round-trips"]);
    let r = lab.mercury(&argv).run();
    assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(lab.path("leaf.transcript")).unwrap_or_default();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let new = &records[*seen..];
    *seen = records.len();
    let waits = if exec {
        let sessions: std::collections::BTreeSet<u64> =
            new.iter().map(|r| r["session"].as_u64().unwrap()).collect();
        sessions.len()
    } else {
        new.iter().filter(|r| r["waited"] == true).count()
    };
    let reported = r.json()["round_trips"].as_u64().unwrap() as usize;
    assert!(
        reported.abs_diff(waits) <= 1,
        "{args:?}: the device waited {waits} times, Mercury reports {reported} round trips"
    );
    assert!(waits <= new.len(), "{args:?}");
    Count {
        lines: new.len(),
        waits,
        reported,
    }
}

/// `(platform, op, read before write, --no-verify)` for every platform and operation.
fn measure_all() -> Vec<(&'static str, &'static str, Count, Count)> {
    let mut rows = Vec::new();
    let cat = mercury::catalog::Catalog::builtin().unwrap();
    for (platform, [p1, p2]) in PLATFORMS {
        let exec = cat.get(platform).unwrap().kind == mercury::catalog::Kind::Exec;
        let lab = Lab::new(&[SimDevice::new("leaf", platform)]);
        let mut seen = 0;
        // VLAN 10 (the idle VLAN) first, so that detach costs the same on both ports.
        measure(&lab, exec, &mut seen, &["add-network", "--vlan", "10"]);
        let ops: [(&str, Vec<&str>, Vec<&str>); 3] = [
            (
                "add-network",
                vec!["add-network", "--vlan", "120"],
                vec!["add-network", "--vlan", "121"],
            ),
            (
                "attach-port",
                vec!["attach-port", "--port", p1, "--vlan", "120"],
                vec!["attach-port", "--port", p2, "--vlan", "121"],
            ),
            (
                "detach-port",
                vec!["detach-port", "--port", p1, "--vlan", "120"],
                vec!["detach-port", "--port", p2, "--vlan", "121"],
            ),
        ];
        for (op, verified, plain) in ops {
            let v = measure(&lab, exec, &mut seen, &verified);
            let mut plain = plain;
            plain.push("--no-verify");
            let n = measure(&lab, exec, &mut seen, &plain);
            rows.push((*platform, op, v, n));
        }
    }
    rows
}

#[test]
fn round_trips() {
    let rows = measure_all();
    let mut table = String::from(
        "platform | op | read before write: lines received | round trips (device) | reported | --no-verify: lines received | round trips (device) | reported | extra round trips\n",
    );
    for (platform, op, v, n) in &rows {
        table.push_str(&format!(
            "{platform} | {op} | {} | {} | {} | {} | {} | {} | {:+}\n",
            v.lines,
            v.waits,
            v.reported,
            n.lines,
            n.waits,
            n.reported,
            v.waits as i64 - n.waits as i64
        ));
    }
    insta::assert_snapshot!(table);
    // The target of issues 14 and 18: on a CLI that takes typed-ahead reads, reading
    // before and after a write costs at most one round trip over the plain write.
    let cat = mercury::catalog::Catalog::builtin().unwrap();
    for (platform, op, v, n) in &rows {
        let p = cat.get(platform).unwrap();
        if p.type_ahead && *op != "add-network" {
            assert!(
                v.waits <= n.waits + 1,
                "{platform} {op}: read before write costs {} round trips, the plain write {}",
                v.waits,
                n.waits
            );
        }
    }
}
