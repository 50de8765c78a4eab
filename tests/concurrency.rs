//! Concurrency: 200 `mercury attach-port` processes started at once over 4 simulated
//! switches (50 different ports each), with `max_sessions = 1` and `= 2`, with request
//! coalescing (the default) and without it. Each run asserts:
//!
//! - every process exits 0 with its own JSON result;
//! - the simulator never saw more concurrent sessions than `max_sessions`
//!   (`sessions.max_seen`; the simulator is also told to refuse any session beyond the
//!   limit, so an excess session would fail a request too);
//! - every request was applied exactly once: its port is in its VLAN in the running and
//!   saved configuration, and the simulator received its `interface` line exactly once;
//! - every audit record is complete: one `started` and one `finished` (rc 0) per request.
//!
//! The simulator answers each line after `slow=5` ms so that requests really overlap;
//! the whole file runs in well under a minute on two cores.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;

use common::{Lab, SimDevice};
use serde_json::Value;

const DEVICES: usize = 4;
const REQUESTS: usize = 200;

/// The i-th port of a simulated IOS switch (48 GigabitEthernet, then TenGigabitEthernet).
fn port(j: usize) -> (String, String) {
    if j < 48 {
        (
            format!("Gi1/0/{}", j + 1),
            format!("GigabitEthernet1/0/{}", j + 1),
        )
    } else {
        (
            format!("Te1/1/{}", j - 47),
            format!("TenGigabitEthernet1/1/{}", j - 47),
        )
    }
}

fn burst(max_sessions: u32, coalesce: bool) {
    let limit = format!("max-sessions={max_sessions}");
    let sim_args: Vec<&str> = vec!["--fault", "slow=5", "--fault", &limit];
    let extra =
        format!("max_sessions = {max_sessions}\nlock_timeout = 120\ncommand_timeout = 30\n");
    let names: Vec<String> = (1..=DEVICES).map(|d| format!("leaf{d}")).collect();
    let devices: Vec<SimDevice> = names
        .iter()
        .map(|n| SimDevice {
            sim_args: &sim_args,
            extra: &extra,
            ..SimDevice::new(n, "cisco_ios")
        })
        .collect();
    let lab = Lab::new(&devices);
    lab.append_config(&format!("\n[coalesce]\nenabled = {coalesce}\n"));

    // Request i: device i % 4, its (i / 4)-th port, VLAN 100 + i % 50 — so every request
    // leaves its own mark.
    let vlan = |i: usize| 100 + (i % 50);
    let children: Vec<_> = (0..REQUESTS)
        .map(|i| {
            let (p, _) = port(i / DEVICES);
            lab.mercury([
                "attach-port",
                "--device",
                &names[i % DEVICES],
                "--port",
                &p,
                "--vlan",
                &vlan(i).to_string(),
                "--reason",
                "concurrency",
                "--request-id",
                &format!("c-{i}"),
            ])
            .spawn()
        })
        .collect();
    let mut failures = Vec::new();
    for (i, c) in children.into_iter().enumerate() {
        let r = common::finish(c);
        if r.code != 0 {
            failures.push(format!("c-{i}: exit {}: {}", r.code, r.stdout.trim()));
            continue;
        }
        let v = r.json();
        assert_eq!(v["request_id"], format!("c-{i}"), "{v}");
    }
    assert!(
        failures.is_empty(),
        "{} of {REQUESTS} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );

    let mut most = 0;
    for (d, name) in names.iter().enumerate() {
        let state = lab.state(name);
        let seen = state["sessions"]["max_seen"].as_u64().unwrap();
        most = most.max(seen);
        assert!(
            (1..=u64::from(max_sessions)).contains(&seen),
            "{name}: {seen} concurrent sessions with max_sessions = {max_sessions}"
        );
        let transcript = lab.transcript(name);
        for i in (0..REQUESTS).filter(|i| i % DEVICES == d) {
            let (_, long) = port(i / DEVICES);
            for cfg in ["running", "saved"] {
                let p = &state[cfg]["ports"][&long];
                assert_eq!(
                    (p["mode"].as_str(), p["access_vlan"].as_u64()),
                    (Some("access"), Some(vlan(i) as u64)),
                    "{name} {cfg} {long} (request c-{i}): {p}"
                );
            }
            // Requests say `Gi1/0/N`; Mercury types the canonical name.
            let sent = transcript
                .iter()
                .filter(|l| **l == format!("interface {long}"))
                .count();
            assert_eq!(sent, 1, "{name}: request c-{i} sent {sent} times");
        }
    }

    // 50 processes per switch, each holding a session for a dozen 5 ms round trips: with
    // every request in its own session, two slots are bound to be used at once somewhere.
    if !coalesce {
        assert_eq!(
            most,
            u64::from(max_sessions),
            "the limit was never reached: the test did not exercise it"
        );
    }
    eprintln!("max_sessions = {max_sessions}, coalesce = {coalesce}: most concurrent sessions seen {most}");

    let mut by_id: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in lab.audit() {
        by_id
            .entry(r["request_id"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(r);
    }
    for i in 0..REQUESTS {
        let id = format!("c-{i}");
        let records = by_id.get(&id).map(Vec::as_slice).unwrap_or_default();
        let events: Vec<&str> = records
            .iter()
            .map(|r| r["event"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(events, ["started", "finished"], "{id}: {records:?}");
        assert_eq!(records[1]["how"]["rc"], 0, "{id}: {}", records[1]);
        assert_eq!(records[1]["how"]["outcome"], "ok", "{id}: {}", records[1]);
    }
}

#[test]
fn two_hundred_requests_on_four_switches_with_one_session_each() {
    burst(1, true);
}

#[test]
fn two_hundred_requests_on_four_switches_with_two_sessions_each() {
    burst(2, true);
}

/// Without coalescing every request opens its own session: the lock slots alone keep the
/// switches within their limit.
#[test]
fn two_hundred_uncoalesced_requests_keep_within_two_sessions_each() {
    burst(2, false);
}
