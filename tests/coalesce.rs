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

/// Holds the device's only lock slot as a holder has it (an flock on the slot file).
fn hold_lock(lab: &Lab, device: &str) -> std::fs::File {
    let slot = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lab.path(&format!("locks/{device}.lock")))
        .unwrap();
    slot.lock().unwrap();
    slot
}

fn lines_after(lab: &Lab, device: &str, from: usize) -> Vec<String> {
    lab.transcript(device)[from..].to_vec()
}

/// Issue 18: requests spooled behind a held lock are applied by the next holder as one
/// batch, counted from the simulator's transcript: the holder's own request, then one read
/// of every spooled port, one configuration-mode visit with every spooled request's lines,
/// one read again, one save; before batches, each spooled request had its own reads and its
/// own `configure terminal`. Each waiter still gets its own result: its port's before and
/// after, `changed`, its own lines and nobody else's, its own audit record; one of them
/// (its port already in the VLAN) reads back unchanged and sends nothing of its own.
#[test]
fn spooled_requests_are_applied_in_one_configuration_visit_each_with_its_own_result() {
    const N: u32 = 8;
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    add_vlans(&lab, "leaf", &[10, 120]);
    // Port 3 is in VLAN 120 already: its request changes nothing.
    lab.attach("leaf", "Gi1/0/3", "120").run().expect(0);
    let slot = hold_lock(&lab, "leaf");
    let from = lab.transcript("leaf").len();
    let mut children = Vec::new();
    for i in 1..=N {
        let id = format!("b-{i}");
        children.push((
            i,
            id.clone(),
            attach(&lab, "leaf", &format!("Gi1/0/{i}"), 120, &id),
        ));
        wait_for_spooled(&lab, "leaf", i as usize);
    }
    drop(slot);
    let mut holder = None;
    for (i, id, child) in children {
        let pid = child.id();
        let ran = common::finish(child);
        let v = assert_own_result(&lab, &id, pid, &ran, 0);
        let port = format!("GigabitEthernet1/0/{i}");
        let inputs = ran.inputs();
        // Its own port read (before and after, unless already as requested) and changed, and
        // no other port.
        for other in (1..=N).filter(|o| *o != i) {
            let theirs = format!("GigabitEthernet1/0/{other}");
            assert!(
                !inputs.iter().any(|l| l.ends_with(&theirs)),
                "{id}: another request's line in its result: {inputs:?}"
            );
        }
        let ports = v["data"]["ports"].as_array().unwrap();
        assert_eq!(ports.len(), 1, "{id}: {v}");
        assert_eq!(ports[0]["port"], port, "{id}: {v}");
        assert_eq!(ports[0]["after"]["access_vlan"], 120, "{id}: {v}");
        if i == 3 {
            assert_eq!(v["changed"], false, "{id}: {v}");
            assert_eq!(v["data"]["skipped"], true, "{id}: {v}");
            assert!(
                !inputs.contains(&format!("interface {port}")),
                "{id}: {inputs:?}"
            );
        } else {
            assert_eq!(v["changed"], true, "{id}: {v}");
            assert_ne!(ports[0]["before"]["access_vlan"], 120, "{id}: {v}");
            assert_eq!(
                count(&inputs, &format!("show running-config interface {port}")),
                2,
                "{id}: read before and after: {inputs:?}"
            );
            assert!(
                inputs.contains(&format!("interface {port}")),
                "{id}: {inputs:?}"
            );
        }
        match v["data"]["coalesced"]["role"].as_str() {
            Some("holder") => holder = Some(v.clone()),
            Some("waiter") => assert!(
                inputs.contains(&"copy running-config startup-config".to_string()),
                "{id}: {inputs:?}"
            ),
            other => panic!("{id}: role {other:?}: {v}"),
        }
    }
    let holder = holder.expect("one request held the lock");
    let batches = holder["data"]["coalesced"]["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 1, "{holder}");
    assert_eq!(
        batches[0].as_array().unwrap().len(),
        N as usize - 1,
        "{holder}"
    );

    let sent = lines_after(&lab, "leaf", from);
    // The holder's own request, then one visit for all the others.
    assert_eq!(count(&sent, "configure terminal"), 2, "{sent:#?}");
    assert_eq!(
        count(&sent, "copy running-config startup-config"),
        1,
        "{sent:#?}"
    );
    assert!(count(&sent, "show vlan brief") <= 2, "{sent:#?}");
    for i in 1..=N {
        let port = format!("GigabitEthernet1/0/{i}");
        let reads = count(&sent, &format!("show running-config interface {port}"));
        assert!(reads <= 2, "{port} read {reads} times: {sent:#?}");
        let state = &lab.state("leaf")["saved"]["ports"][&port];
        assert_eq!(state["access_vlan"], 120, "{port}: {state}");
    }
    // Two sessions: the one that put port 3 in VLAN 120 and the holder's.
    assert_eq!(lab.state("leaf")["sessions"]["max_seen"], 1);
    // Issue 18, counted by the device: in the batch's configuration visit each port costs
    // two round trips, its `interface` line and then its body with `exit` typed ahead in
    // one write (before, every line of the block waited for its prompt).
    let records: Vec<Value> = std::fs::read_to_string(lab.path("leaf.transcript"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let records = &records[from..];
    let visit = records
        .iter()
        .rposition(|r| r["line"] == "configure terminal")
        .unwrap();
    let end = visit
        + records[visit..]
            .iter()
            .position(|r| r["line"] == "end")
            .unwrap();
    let blocks = records[visit..end]
        .iter()
        .filter(|r| r["line"].as_str().unwrap().starts_with("interface "))
        .count();
    assert_eq!(
        blocks,
        N as usize - 2,
        "the batch's ports but 3 (and the holder's)"
    );
    let waited = records[visit + 1..end]
        .iter()
        .filter(|r| r["waited"] == true)
        .count();
    assert_eq!(
        waited,
        2 * blocks,
        "{:#?}",
        &records[visit..end]
            .iter()
            .map(|r| (r["line"].as_str().unwrap(), r["waited"] == true))
            .collect::<Vec<_>>()
    );
    assert!(
        records[visit..end]
            .iter()
            .filter(|r| r["line"] == "exit")
            .all(|r| r["waited"] == false),
        "every block's exit typed ahead"
    );
}

/// Two requests on one port keep their arrival order: an attach and then a detach of the
/// same VLAN on the same port never share a batch (the detach starts the next one), and
/// the port ends detached, as the requests run one by one would leave it. The detach
/// reads the port as the attach left it.
#[test]
fn requests_on_the_same_port_keep_their_order_across_batches() {
    let lab = Lab::new(&[slow_ios(&["--fault", "slow=150"])]);
    add_vlans(&lab, "leaf", &[10, 120, 121, 122]);
    let holder = attach(&lab, "leaf", "Gi1/0/1", 121, "h");
    wait_for_holder(&lab, "leaf", "h");
    let a = attach(&lab, "leaf", "Gi1/0/5", 120, "a");
    wait_for_spooled(&lab, "leaf", 1);
    let b = attach(&lab, "leaf", "Gi1/0/6", 122, "b");
    wait_for_spooled(&lab, "leaf", 2);
    let c = lab
        .mercury([
            "detach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "burst",
            "--request-id",
            "c",
        ])
        .spawn();
    wait_for_spooled(&lab, "leaf", 3);
    let d = attach(&lab, "leaf", "Gi1/0/7", 120, "d");
    wait_for_spooled(&lab, "leaf", 4);
    let hv = common::finish(holder).expect(0);
    for (id, child) in [("a", a), ("b", b), ("c", c), ("d", d)] {
        let v = common::finish(child).expect(0);
        assert_eq!(v["data"]["coalesced"]["role"], "waiter", "{id}: {v}");
        if id == "c" {
            // The detach read the port as the attach had left it.
            assert_eq!(v["data"]["ports"][0]["before"]["access_vlan"], 120, "{v}");
            assert_eq!(v["data"]["ports"][0]["after"]["access_vlan"], 10, "{v}");
        }
    }
    let batches: Vec<Vec<String>> =
        serde_json::from_value(hv["data"]["coalesced"]["batches"].clone()).unwrap();
    assert!(!batches.is_empty(), "{hv}");
    for batch in &batches {
        assert!(
            !(batch.contains(&"a".to_string()) && batch.contains(&"c".to_string())),
            "the attach and the detach of one port in one batch: {batches:?}"
        );
    }
    let state = lab.state("leaf");
    let p5 = &state["saved"]["ports"]["GigabitEthernet1/0/5"];
    assert_eq!(p5["access_vlan"], 10, "{p5}");
    assert_eq!(
        state["saved"]["ports"]["GigabitEthernet1/0/6"]["access_vlan"],
        122
    );
    assert_eq!(
        state["saved"]["ports"]["GigabitEthernet1/0/7"]["access_vlan"],
        120
    );
}

/// A request whose line is refused inside a batch fails alone: the requests before it in
/// the combined configuration visit are applied and verified, its own port is put back as
/// it was read and never saved in the refused state, and the request after it is sent in
/// the next visit and applied. Each result says exactly that.
#[test]
fn a_refused_line_in_a_batch_fails_only_its_request() {
    let lab = Lab::new(&[slow_ios(&[
        "--fault",
        "slow=150",
        "--fault",
        "reject=switchport access vlan 150",
    ])]);
    add_vlans(&lab, "leaf", &[10, 120, 130, 150]);
    let holder = attach(&lab, "leaf", "Gi1/0/1", 120, "h");
    wait_for_holder(&lab, "leaf", "h");
    let first = attach(&lab, "leaf", "Gi1/0/2", 120, "first");
    wait_for_spooled(&lab, "leaf", 1);
    let bad = attach(&lab, "leaf", "Gi1/0/3", 150, "bad");
    wait_for_spooled(&lab, "leaf", 2);
    let last = attach(&lab, "leaf", "Gi1/0/4", 130, "last");
    wait_for_spooled(&lab, "leaf", 3);
    let (hp, fp, bp, lp) = (holder.id(), first.id(), bad.id(), last.id());
    let hv = assert_own_result(&lab, "h", hp, &common::finish(holder), 0);
    let fv = assert_own_result(&lab, "first", fp, &common::finish(first), 0);
    let bad_ran = common::finish(bad);
    let bv = assert_own_result(&lab, "bad", bp, &bad_ran, 1);
    let lv = assert_own_result(&lab, "last", lp, &common::finish(last), 0);

    let batches: Vec<Vec<String>> =
        serde_json::from_value(hv["data"]["coalesced"]["batches"].clone()).unwrap();
    assert_eq!(batches, [["first", "bad", "last"]], "{hv}");
    for v in [&fv, &lv] {
        assert_eq!(v["changed"], true, "{v}");
        assert_eq!(v["data"]["verified"], true, "{v}");
    }
    assert_eq!(bv["error_kind"], "device_rejected", "{bv}");
    assert!(bv["msg"].as_str().unwrap().contains("150"), "{bv}");
    assert_eq!(
        bv["partial"]["rejected"], "switchport access vlan 150",
        "{bv}"
    );
    assert_eq!(bv["partial"]["restored"], true, "{bv}");
    // Issue 18: the block's body went in one write, so `exit` after the refused line ran
    // and is listed as accepted, in the refused request's progress and no one else's.
    assert_eq!(
        bv["partial"]["accepted"],
        serde_json::json!([
            "interface GigabitEthernet1/0/3",
            "switchport mode access",
            "exit"
        ]),
        "{bv}"
    );
    for v in [&fv, &lv] {
        assert!(v["partial"].is_null(), "{v}");
    }
    // Its result holds its own lines, among them the refused one, and no one else's.
    let inputs = bad_ran.inputs();
    assert!(
        inputs.contains(&"switchport access vlan 150".to_string()),
        "{inputs:?}"
    );
    assert!(
        !inputs
            .iter()
            .any(|l| l.contains("1/0/2") || l.contains("1/0/4")),
        "{inputs:?}"
    );
    let sent = lab.transcript("leaf");
    let at = |line: &str| sent.iter().rposition(|l| l == line).unwrap();
    assert!(at("switchport access vlan 150") < at("switchport access vlan 130"));
    let state = lab.state("leaf");
    for (port, vlan) in [("1/0/1", 120), ("1/0/2", 120), ("1/0/4", 130)] {
        let p = &state["saved"]["ports"][format!("GigabitEthernet{port}")];
        assert_eq!(p["access_vlan"], vlan, "{port}: {p}");
    }
    for where_ in ["running", "saved"] {
        let p = &state[where_]["ports"]["GigabitEthernet1/0/3"];
        assert_ne!(p["access_vlan"], 150, "{where_}: {p}");
    }
}

/// On a platform whose commit is all or nothing (Junos), a line refused inside a batch's
/// candidate leaves nothing of the batch in effect (rolled back): every request of it then
/// runs on its own, so the refusal is the refused request's alone and the others are
/// applied and committed.
#[test]
fn a_refused_line_in_a_junos_batch_leaves_the_others_applied_on_their_own() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "slow=150", "--fault", "reject=vlan members 150"],
        ..SimDevice::new("leaf", "juniper")
    }]);
    add_vlans(&lab, "leaf", &[10, 120, 130, 150]);
    let holder = attach(&lab, "leaf", "ge-0/0/1", 120, "h");
    wait_for_holder(&lab, "leaf", "h");
    let first = attach(&lab, "leaf", "ge-0/0/2", 120, "first");
    wait_for_spooled(&lab, "leaf", 1);
    let bad = attach(&lab, "leaf", "ge-0/0/3", 150, "bad");
    wait_for_spooled(&lab, "leaf", 2);
    let last = attach(&lab, "leaf", "ge-0/0/4", 130, "last");
    wait_for_spooled(&lab, "leaf", 3);
    let (hp, fp, bp, lp) = (holder.id(), first.id(), bad.id(), last.id());
    let hv = assert_own_result(&lab, "h", hp, &common::finish(holder), 0);
    assert_own_result(&lab, "first", fp, &common::finish(first), 0);
    let bv = assert_own_result(&lab, "bad", bp, &common::finish(bad), 1);
    assert_own_result(&lab, "last", lp, &common::finish(last), 0);
    let batches: Vec<Vec<String>> =
        serde_json::from_value(hv["data"]["coalesced"]["batches"].clone()).unwrap();
    assert_eq!(batches, [["first", "bad", "last"]], "{hv}");
    assert_eq!(bv["error_kind"], "device_rejected", "{bv}");
    let state = lab.state("leaf");
    for (port, vlan) in [("ge-0/0/1", 120), ("ge-0/0/2", 120), ("ge-0/0/4", 130)] {
        let p = &state["running"]["ports"][port];
        assert_eq!(p["access_vlan"], vlan, "{port}: {p}");
    }
    assert_ne!(state["running"]["ports"]["ge-0/0/3"]["access_vlan"], 150);
}

/// Issue 18: by default one holder serves a burst larger than the earlier cap of 64
/// requests (`[coalesce] max_batch`, now 256) in its one session. 80 requests spool behind
/// a held lock (the switch made a two-member stack so each has its own port); when the lock
/// is released, one of them becomes the holder and applies the 79 others. Counted by the
/// device: one session more, never two at once, every port in its VLAN and saved. With a
/// cap of 64 the last 15 would need a second holder and a second login.
#[test]
fn a_burst_above_64_requests_is_served_in_one_session_by_default() {
    const N: usize = 80;
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    add_vlans(&lab, "leaf", &[120]);
    let state_file = lab.path("leaf.json");
    let mut s: Value =
        serde_json::from_str(&std::fs::read_to_string(&state_file).unwrap()).unwrap();
    for place in ["running", "saved"] {
        let ports = s[place]["ports"].as_object_mut().unwrap();
        let template = ports["GigabitEthernet1/0/1"].clone();
        for i in 1..=48 {
            ports.insert(format!("GigabitEthernet2/0/{i}"), template.clone());
        }
    }
    std::fs::write(&state_file, s.to_string()).unwrap();
    let port = |j: usize| format!("Gi{}/0/{}", j / 48 + 1, j % 48 + 1);
    let before = lab.state("leaf")["sessions"]["total"].as_u64().unwrap();

    let slot = hold_lock(&lab, "leaf");
    let mut children = Vec::new();
    for j in 0..N {
        let id = format!("big-{j}");
        children.push((id.clone(), attach(&lab, "leaf", &port(j), 120, &id)));
    }
    wait_for_spooled(&lab, "leaf", N);
    drop(slot);

    let mut holders = Vec::new();
    for (id, child) in children {
        let pid = child.id();
        let ran = common::finish(child);
        let v = assert_own_result(&lab, &id, pid, &ran, 0);
        assert_eq!(v["changed"], true, "{id}: {v}");
        if v["data"]["coalesced"]["role"] == "holder" {
            holders.push(v);
        }
    }
    assert_eq!(holders.len(), 1, "one holder for the whole burst");
    let served = holders[0]["data"]["coalesced"]["served"]
        .as_array()
        .unwrap();
    assert_eq!(served.len(), N - 1, "{}", holders[0]);
    let state = lab.state("leaf");
    assert_eq!(state["sessions"]["max_seen"], 1, "one session at a time");
    assert_eq!(
        state["sessions"]["total"].as_u64().unwrap() - before,
        1,
        "the burst took one login"
    );
    for j in 0..N {
        let name = format!("GigabitEthernet{}/0/{}", j / 48 + 1, j % 48 + 1);
        assert_eq!(state["saved"]["ports"][&name]["access_vlan"], 120, "{name}");
    }
    assert_eq!(spool_files(&lab, "leaf", ""), 0, "spool not empty");
}
