//! What ports read back mean for a result, for every driver kind: `verify_port`'s comparison
//! with the request's expectations, `--verify`'s before / after, and the warning about
//! fields a platform does not show (never counted as verified).

use serde_json::{json, Value};

use super::{Done, Summary};
use crate::verify::{self, Check, PortReport, PortState};

/// Fields a platform's show output does not carry, per port: the warning that says so.
pub fn unverified_warning(reports: &[PortReport]) -> Option<String> {
    let unverified: Vec<String> = reports
        .iter()
        .filter(|p| !p.unverified.is_empty())
        .map(|p| format!("{} ({})", p.port, p.unverified.join(", ")))
        .collect();
    (!unverified.is_empty()).then(|| {
        format!(
            "verify: not verified, the platform does not show it: {}",
            unverified.join("; ")
        )
    })
}

/// `verify_port`: each port read compared with what the request expects of it, if
/// anything. A port not in the expected state fails the request (drift).
pub fn verify_port(device: &str, checks: &[Check], states: Vec<PortState>) -> Done {
    let mut reports = Vec::new();
    let mut drifted = Vec::new();
    for (c, state) in checks.iter().zip(states) {
        let verdict = c.expect.check(&state);
        if !verdict.drift.is_empty() {
            drifted.push(format!("{}: {}", c.port, verdict.describe()));
        }
        let after = (!c.expect.is_empty()).then(|| c.expect.desired(&state));
        reports.push(PortReport {
            port: c.port.clone(),
            changed: false,
            drift: verdict.drift,
            unverified: verdict.unverified,
            before: Some(state),
            after,
        });
    }
    let expecting = checks.iter().any(|c| !c.expect.is_empty());
    let data = json!({
        "in_state": expecting.then_some(drifted.is_empty()),
        "ports": reports.iter().map(|r| json!({
            "port": r.port,
            "state": r.before,
            "drift": r.drift,
            "unverified": r.unverified,
        })).collect::<Vec<_>>(),
    });
    let msg = if !expecting {
        format!("read {} port(s) on {device}", reports.len())
    } else {
        format!(
            "{} port(s) on {device} are in the expected state",
            reports.len()
        )
    };
    Done {
        changed: false,
        read: Vec::new(),
        summary: Summary::Said(msg),
        data,
        diff: expecting.then(|| verify::diff(&reports)),
        warnings: unverified_warning(&reports).into_iter().collect(),
        drift: (!drifted.is_empty()).then(|| {
            format!(
                "not in the expected state on {device}: {}",
                drifted.join("; ")
            )
        }),
    }
}

/// `--verify`: the ports read before and after a change (or only before, when they already
/// were as requested and nothing was sent). `changed` is whether any port reads back
/// differently; a port that does not show the change fails the request.
pub fn verified(op: &str, device: &str, reports: Vec<PortReport>, skipped: bool) -> Done {
    let drift: Vec<String> = reports
        .iter()
        .filter(|r| !r.drift.is_empty())
        .map(|r| {
            format!(
                "{} shows {}",
                r.port,
                verify::Verdict {
                    drift: r.drift.clone(),
                    unverified: Vec::new()
                }
                .describe()
            )
        })
        .collect();
    let changed = reports.iter().any(|p| p.changed);
    let data: Value = json!({"verified": drift.is_empty(), "skipped": skipped, "ports": reports});
    Done {
        read: reports.clone(),
        changed,
        summary: if skipped {
            Summary::Skipped
        } else {
            Summary::Verified
        },
        diff: Some(verify::diff(&reports)),
        warnings: unverified_warning(&reports).into_iter().collect(),
        data,
        drift: (!drift.is_empty()).then(|| {
            format!(
                "verify: {op} was accepted by {device} but {}",
                drift.join("; ")
            )
        }),
    }
}
