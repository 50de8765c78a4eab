//! Request coalescing end to end: real `mercury` processes racing for one `mercury-sim`
//! device made slow (`slow=MS`) so that requests pile up behind the lock holder. They
//! assert the device state, each process's own exit code, JSON and audit records, that
//! every request is applied exactly once, and recovery after the holder is killed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::{Lab, Ran, SimDevice};
use serde_json::Value;

fn add_vlans(lab: &Lab, device: &str, vlans: &[u32]) {
    for v in vlans {
        lab.mercury([
            "add-network",
            "--device",
            device,
            "--vlan",
            &v.to_string(),
            "--reason",
            "setup",
        ])
        .run()
        .expect(0);
    }
}

fn attach(lab: &Lab, device: &str, port: &str, vlan: u32, id: &str) -> Child {
    lab.mercury([
        "attach-port",
        "--device",
        device,
        "--port",
        port,
        "--vlan",
        &vlan.to_string(),
        "--reason",
        "burst",
        "--request-id",
        id,
    ])
    .spawn()
}

/// Waits until `id` holds the device lock (its holder info is in the lock file).
fn wait_for_holder(lab: &Lab, device: &str, id: &str) {
    let lock = lab.path(&format!("locks/{device}.lock"));
    let t = Instant::now();
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains(id)
    {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{id} never took the lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn spool_files(lab: &Lab, device: &str, ext: &str) -> usize {
    std::fs::read_dir(lab.path(&format!("locks/{device}.spool")))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(ext))
                .count()
        })
        .unwrap_or(0)
}

fn wait_for_spooled(lab: &Lab, device: &str, n: usize) {
    let t = Instant::now();
    while spool_files(lab, device, ".req") + spool_files(lab, device, ".claimed") < n {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "only {} requests spooled",
            spool_files(lab, device, ".req")
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Audit records by request id.
fn audit_by_id(lab: &Lab) -> BTreeMap<String, Vec<Value>> {
    let mut map: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in lab.audit() {
        map.entry(r["request_id"].as_str().unwrap().to_string())
            .or_default()
            .push(r);
    }
    map
}

/// Each process's own story: its JSON names its request, its exit code is its rc, and the
/// audit log has exactly its started + finished records, written by its own pid.
fn assert_own_result(lab: &Lab, id: &str, pid: u32, ran: &Ran, code: i32) -> Value {
    let v = ran.expect(code);
    assert_eq!(v["request_id"], id, "{v}");
    let audit = audit_by_id(lab);
    let records = audit.get(id).unwrap_or_else(|| panic!("no audit for {id}"));
    let events: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["started", "finished"], "{id}: {records:?}");
    for r in records {
        assert_eq!(
            r["who"]["pid"], pid,
            "{id}: record written by another process"
        );
    }
    assert_eq!(records[1]["how"]["rc"], code, "{id}");
    v
}

fn count(lines: &[String], line: &str) -> usize {
    lines.iter().filter(|l| l.as_str() == line).count()
}

fn state_without_sessions(lab: &Lab, device: &str) -> Value {
    let mut s = lab.state(device);
    s.as_object_mut().unwrap().remove("sessions");
    s
}

fn slow_ios(ms: &'static [&'static str]) -> SimDevice<'static> {
    SimDevice {
        sim_args: ms,
        ..SimDevice::new("leaf", "cisco_ios")
    }
}

#[test]
fn burst_is_applied_exactly_once_in_few_sessions_and_matches_sequential_runs() {
    const N: u32 = 12;
    let lab = Lab::new(&[slow_ios(&["--fault", "slow=60"])]);
    let vlans: Vec<u32> = (1..=N).map(|i| 100 + i).collect();
    add_vlans(&lab, "leaf", &vlans);
    let before = lab.state("leaf")["sessions"]["total"].as_u64().unwrap();

    let holder = attach(&lab, "leaf", "Gi1/0/1", 101, "burst-1");
    wait_for_holder(&lab, "leaf", "burst-1");
    let mut children = vec![("burst-1".to_string(), holder)];
    for i in 2..=N {
        let id = format!("burst-{i}");
        children.push((
            id.clone(),
            attach(&lab, "leaf", &format!("Gi1/0/{i}"), 100 + i, &id),
        ));
    }
    let mut roles = BTreeMap::new();
    for (id, child) in children {
        let pid = child.id();
        let ran = common::finish(child);
        let v = assert_own_result(&lab, &id, pid, &ran, 0);
        assert_eq!(v["changed"], true, "{v}");
        let i: u32 = id.trim_start_matches("burst-").parse().unwrap();
        // Its own lines, and no one else's.
        let inputs = ran.inputs();
        assert!(
            inputs.contains(&format!("switchport access vlan {}", 100 + i)),
            "{id}: {inputs:?}"
        );
        let foreign = inputs
            .iter()
            .filter(|l| l.starts_with("switchport access vlan "))
            .count();
        assert_eq!(foreign, 1, "{id}: {inputs:?}");
        let role = v["data"]["coalesced"]["role"].as_str().unwrap_or("alone");
        *roles.entry(role.to_string()).or_insert(0) += 1;
        if role == "waiter" {
            assert!(
                inputs.contains(&"copy running-config startup-config".to_string()),
                "a waiter's result shows the save that made its change durable: {inputs:?}"
            );
            let audit = audit_by_id(&lab);
            assert!(audit[&id][1]["how"]["coalesced_by"].is_string(), "{id}");
        }
    }
    assert!(roles.get("waiter").copied().unwrap_or(0) >= 1, "{roles:?}");

    // Exactly once: every request's VLAN line reached the switch once.
    let transcript = lab.transcript("leaf");
    for i in 1..=N {
        assert_eq!(
            count(&transcript, &format!("switchport access vlan {}", 100 + i)),
            1,
            "port {i}"
        );
    }
    let state = lab.state("leaf");
    assert_eq!(state["sessions"]["max_seen"], 1, "one session at a time");
    let sessions = state["sessions"]["total"].as_u64().unwrap() - before;
    assert!(
        sessions < N as u64 / 2,
        "{sessions} sessions for {N} requests"
    );
    let spool_left = spool_files(&lab, "leaf", "");
    assert_eq!(spool_left, 0, "spool not empty");

    // The same requests one by one on a fresh device end in the same configuration.
    let seq = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    add_vlans(&seq, "leaf", &vlans);
    for i in 1..=N {
        let id = format!("seq-{i}");
        let r = common::finish(attach(&seq, "leaf", &format!("Gi1/0/{i}"), 100 + i, &id));
        r.expect(0);
    }
    let a = state_without_sessions(&lab, "leaf");
    let b = state_without_sessions(&seq, "leaf");
    assert_eq!(a["running"], b["running"]);
    assert_eq!(a["saved"], b["saved"]);
    assert_eq!(a["running"], a["saved"], "the batch was saved");
}

/// A rejected line in one waiter's request fails that request only, on a plain CLI, a
/// commit-based CLI and a commit-based exec platform.
#[test]
fn a_rejected_waiter_request_does_not_affect_the_holder_or_other_waiters() {
    for (platform, ports, keys) in [
        (
            "cisco_ios",
            ["Gi1/0/1", "Gi1/0/2", "Gi1/0/3"],
            [
                "GigabitEthernet1/0/1",
                "GigabitEthernet1/0/2",
                "GigabitEthernet1/0/3",
            ],
        ),
        (
            "juniper",
            ["ge-0/0/1", "ge-0/0/2", "ge-0/0/3"],
            ["ge-0/0/1", "ge-0/0/2", "ge-0/0/3"],
        ),
        (
            "cumulus_nvue",
            ["swp1", "swp2", "swp3"],
            ["swp1", "swp2", "swp3"],
        ),
    ] {
        let lab = Lab::new(&[SimDevice {
            sim_args: &["--fault", "slow=150", "--fault", "reject=150"],
            ..SimDevice::new("leaf", platform)
        }]);
        add_vlans(&lab, "leaf", &[10, 120, 130]);
        let holder = attach(&lab, "leaf", ports[0], 120, "h");
        wait_for_holder(&lab, "leaf", "h");
        let bad = attach(&lab, "leaf", ports[1], 150, "bad");
        wait_for_spooled(&lab, "leaf", 1);
        let good = attach(&lab, "leaf", ports[2], 130, "good");
        let (hp, bp, gp) = (holder.id(), bad.id(), good.id());
        let (h, b, g) = (
            common::finish(holder),
            common::finish(bad),
            common::finish(good),
        );
        assert_own_result(&lab, "h", hp, &h, 0);
        let bv = assert_own_result(&lab, "bad", bp, &b, 1);
        assert_eq!(bv["error_kind"], "device_rejected", "{platform}: {bv}");
        assert!(bv["msg"].as_str().unwrap().contains("150"), "{bv}");
        let gv = assert_own_result(&lab, "good", gp, &g, 0);
        assert_eq!(
            gv["data"]["coalesced"]["role"], "waiter",
            "{platform}: the good request rode the holder's session: {gv}"
        );
        assert_eq!(
            bv["data"]["coalesced"]["role"], "waiter",
            "{platform}: {bv}"
        );
        let state = lab.state("leaf");
        for (port, vlan) in [(keys[0], 120), (keys[2], 130)] {
            assert_eq!(
                state["running"]["ports"][port]["access_vlan"], vlan,
                "{platform} {port}: {}",
                state["running"]["ports"][port]
            );
            assert_eq!(
                state["saved"]["ports"][port]["access_vlan"], vlan,
                "{platform} {port} saved"
            );
        }
        assert_ne!(
            state["running"]["ports"][keys[1]]["access_vlan"], 150,
            "{platform}"
        );
        assert_eq!(state["sessions"]["max_seen"], 1, "{platform}");
    }
}

#[test]
fn a_killed_holder_leaves_a_state_a_later_run_recovers_from() {
    let lab = Lab::new(&[slow_ios(&["--fault", "slow=200"])]);
    add_vlans(&lab, "leaf", &[10, 101, 102, 103, 104, 105]);
    let mut holder = attach(&lab, "leaf", "Gi1/0/1", 101, "k-1");
    wait_for_holder(&lab, "leaf", "k-1");
    let mut waiters = Vec::new();
    for i in 2..=5u32 {
        let id = format!("k-{i}");
        waiters.push((
            id.clone(),
            i,
            attach(&lab, "leaf", &format!("Gi1/0/{i}"), 100 + i, &id),
        ));
    }
    wait_for_spooled(&lab, "leaf", 4);
    // Kill the holder while it applies a waiter's request.
    let t = Instant::now();
    while spool_files(&lab, "leaf", ".claimed") == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "holder never claimed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    holder.kill().unwrap();
    let _ = holder.wait();

    let mut retry = vec![(1u32, "k-1".to_string())];
    for (id, i, child) in waiters {
        let ran = common::finish(child);
        match ran.code {
            0 => {}
            75 => {
                let v = ran.json();
                assert!(
                    v["msg"].as_str().unwrap().contains("may be partly applied"),
                    "{v}"
                );
                retry.push((i, id));
            }
            other => panic!("{id}: exit {other}: {}", ran.stdout),
        }
    }
    assert!(
        retry.len() >= 2,
        "the claimed request reports its holder gone"
    );
    // A later run of the failed requests succeeds and the device ends as intended.
    for (i, id) in retry {
        let r = common::finish(attach(
            &lab,
            "leaf",
            &format!("Gi1/0/{i}"),
            100 + i,
            &format!("{id}-again"),
        ));
        r.expect(0);
    }
    let state = lab.state("leaf");
    for i in 1..=5u32 {
        let p = &state["running"]["ports"][format!("GigabitEthernet1/0/{i}")];
        assert_eq!(p["access_vlan"], 100 + i, "port {i}: {p}");
    }
    assert_eq!(state["sessions"]["active"], 0);
    // Not 1: SIGKILL takes the holder but not its transport (here the simulator process,
    // over SSH the TCP connection until the switch notices), so the next holder's session
    // may overlap the dead one's for a moment. The lock still serialised the live ones.
    assert!(
        state["sessions"]["max_seen"].as_u64().unwrap() <= 2,
        "{}",
        state["sessions"]
    );
    // Nothing left but what a later run cleans: the spool is empty after those runs.
    assert_eq!(
        spool_files(&lab, "leaf", ""),
        0,
        "{:?}",
        list(&lab.path("locks"))
    );
}

fn list(dir: &Path) -> Vec<String> {
    walk(dir)
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.filter_map(Result::ok) {
            out.push(e.path().display().to_string());
            if e.path().is_dir() {
                out.extend(walk(&e.path()));
            }
        }
    }
    out
}

#[test]
fn without_coalescing_every_request_opens_its_own_session() {
    let lab = Lab::new(&[slow_ios(&["--fault", "slow=50"])]);
    lab.append_config("\n[coalesce]\nenabled = false\n");
    add_vlans(&lab, "leaf", &[10, 101, 102, 103]);
    let before = lab.state("leaf")["sessions"]["total"].as_u64().unwrap();
    let holder = attach(&lab, "leaf", "Gi1/0/1", 101, "n-1");
    wait_for_holder(&lab, "leaf", "n-1");
    let others: Vec<Child> = (2..=3u32)
        .map(|i| {
            attach(
                &lab,
                "leaf",
                &format!("Gi1/0/{i}"),
                100 + i,
                &format!("n-{i}"),
            )
        })
        .collect();
    common::finish(holder).expect(0);
    for c in others {
        let v = common::finish(c).expect(0);
        assert!(v["data"]["coalesced"].is_null(), "{v}");
    }
    let state = lab.state("leaf");
    assert_eq!(state["sessions"]["total"].as_u64().unwrap() - before, 3);
    assert!(!lab.path("locks/leaf.spool").exists());
}

/// A waiter whose change fails part-way and cannot be undone (not read first: nothing to
/// put back) is never saved with everyone else's: the holder skips the session's save and
/// says why, and the saved configuration keeps none of the failed request's lines.
#[test]
fn a_partly_applied_waiter_that_cannot_be_undone_is_never_saved() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "slow=150", "--fault", "reject=150"],
        ..SimDevice::new("leaf", "cisco_ios")
    }]);
    add_vlans(&lab, "leaf", &[10, 120, 130]);
    let holder = attach(&lab, "leaf", "Gi1/0/1", 120, "h");
    wait_for_holder(&lab, "leaf", "h");
    let bad = lab
        .mercury([
            "--no-verify",
            "attach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/2",
            "--vlan",
            "150",
            "--reason",
            "burst",
            "--request-id",
            "bad",
        ])
        .spawn();
    wait_for_spooled(&lab, "leaf", 1);
    let (h, b) = (common::finish(holder), common::finish(bad));
    let hv = h.expect(0);
    let bv = b.expect(1);
    assert_eq!(bv["data"]["coalesced"]["role"], "waiter", "{bv}");
    assert_eq!(bv["changed"], true, "{bv}");
    assert_eq!(bv["partial"]["saved"], false, "{bv}");
    assert!(
        hv["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("not saved: coalesced request bad")),
        "{hv}"
    );
    let state = lab.state("leaf");
    // The failed request's partial line is in the running configuration only.
    assert_eq!(
        state["running"]["ports"]["GigabitEthernet1/0/2"]["mode"],
        "access"
    );
    assert!(
        state["saved"]["ports"]["GigabitEthernet1/0/2"]["mode"].is_null(),
        "{state}"
    );
}

/// Every thread of `pid`: (name, voluntary context switches — how often it blocked and was
/// woken).
fn threads(pid: u32) -> Vec<(String, u64)> {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter_map(|t| {
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            let field = |k: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.trim().to_string())
            };
            Some((
                field("Name:")?,
                field("voluntary_ctxt_switches:")?.parse().ok()?,
            ))
        })
        .collect()
}

/// A waiter behind a held lock costs nothing while it waits: counted, not timed. The lock
/// is held by this test (an flock on the slot file, as a holder has it) while a real
/// `mercury attach-port` waits for it — spooled for a holder (coalescing on) and plainly
/// (off). Over three seconds of waiting, the waiter's threads together wake at most 8 times
/// (its progress notice once a second; the blocked `flock` and inotify threads not at all);
/// the polling waiters this replaced woke every 5–100 ms (lock) and 2–25 ms (spool), over
/// 30 and 120 times. Released, the waiter takes the lock at once and applies its change.
#[test]
fn a_waiter_behind_a_held_lock_wakes_about_once_a_second_not_to_poll() {
    for coalesce in [true, false] {
        let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
        if !coalesce {
            lab.append_config("\n[coalesce]\nenabled = false\n");
        }
        add_vlans(&lab, "leaf", &[120]);
        let slot = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(lab.path("locks/leaf.lock"))
            .unwrap();
        slot.lock().unwrap();
        let child = attach(&lab, "leaf", "GigabitEthernet1/0/5", 120, "waiter");
        let pid = child.id();
        // Waiting: its thread blocked in flock exists (and, coalescing, its request is
        // spooled).
        let t = Instant::now();
        while !threads(pid).iter().any(|(n, _)| n.starts_with("lock-wait")) {
            assert!(t.elapsed() < Duration::from_secs(20), "never waited");
            std::thread::sleep(Duration::from_millis(10));
        }
        if coalesce {
            wait_for_spooled(&lab, "leaf", 1);
        }
        let before: u64 = threads(pid).iter().map(|(_, n)| n).sum();
        std::thread::sleep(Duration::from_secs(3));
        let during = threads(pid);
        let woke = during.iter().map(|(_, n)| n).sum::<u64>() - before;
        assert!(
            woke <= 8,
            "coalesce {coalesce}: the waiter woke {woke} times in 3 s: {during:?}"
        );
        drop(slot);
        let ran = common::finish(child);
        let v = ran.expect(0);
        assert_eq!(v["changed"], true, "{v}");
        assert_eq!(
            count(&lab.transcript("leaf"), "switchport access vlan 120"),
            1
        );
    }
}
