//! The layers of DESIGN §3, kept by reading the source: every `crate::` path in `src/`
//! (outside `#[cfg(test)]` modules) must point at the same top-level module or a lower
//! layer; the session and transport layers take only data from the config and catalog;
//! and no module outside `catalog/` and `driver/` names a platform.
//!
//! `docs/architecture.md` draws the same order.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the bottom up. A module may use its own layer and any layer
/// before it in this list; entries sharing a rank are independent of each other.
const LAYERS: &[(&str, u8)] = &[
    ("util", 0),
    ("request", 1),
    ("config", 2),
    ("catalog", 3),
    ("tls", 3),
    ("policy", 4),
    ("transport", 4),
    ("session", 5),
    ("verify", 6),
    ("driver", 7),
    ("lock", 8),
    ("report", 9),
    ("run", 10),
    ("intake", 12),
    ("serve", 11),
];

/// What the session and transport layers may take from the config and the catalog: the
/// data they are handed, never loading, policy or lint code.
const DATA_ONLY: &[(&str, &str, &[&str])] = &[
    (
        "transport",
        "config",
        &[
            "Device",
            "TransportKind",
            "JumpHost",
            "Secrets",
            "TRUST_ON_FIRST_USE",
        ],
    ),
    ("transport", "catalog", &["Channel"]),
    ("session", "config", &["Secrets"]),
    (
        "session",
        "catalog",
        &["Platform", "Channel", "Pattern", "ExecShell"],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's text without its `#[cfg(test)]` module (tests may build whatever they need)
/// and without comments.
fn code(text: &str) -> String {
    let cut = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..cut]
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file belongs to (`src/driver/ovsdb/mod.rs` → `driver`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every `crate::a::b::{c, d}` use in `code`, as (top-level module, names used from it).
fn crate_paths(code: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(after.len());
        let path = &after[..end];
        let mut parts = path.split("::").filter(|s| !s.is_empty());
        let top = parts.next().unwrap_or("").to_string();
        let mut names: Vec<String> = parts.map(str::to_string).collect();
        if after[end..].starts_with('{') {
            let close = after[end..].find('}').map_or(after.len(), |c| end + c);
            names.extend(
                after[end + 1..close]
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .split(" as ")
                            .next()
                            .unwrap_or("")
                            .trim()
                            .to_string()
                    })
                    .filter(|s| !s.is_empty()),
            );
        }
        out.push((top, names));
        rest = &after[end..];
    }
    out
}

#[test]
fn no_layer_imports_a_higher_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    for f in &files {
        let Some(from) = module_of(&src, f) else {
            continue;
        };
        if from == "lib" || from == "main" {
            continue;
        }
        let Some(&r) = rank.get(from.as_str()) else {
            wrong.push(format!(
                "{}: top-level module {from} has no layer",
                f.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for (to, names) in crate_paths(&code(&text)) {
            if to == from {
                continue;
            }
            let Some(&s) = rank.get(to.as_str()) else {
                wrong.push(format!("{}: crate::{to} is not a layer", f.display()));
                continue;
            };
            if s >= r {
                wrong.push(format!(
                    "{}: {from} (layer {r}) uses crate::{to} (layer {s}) {names:?}",
                    f.strip_prefix(&src).unwrap().display()
                ));
            }
            for (m, dep, allowed) in DATA_ONLY {
                if *m == from && *dep == to {
                    for n in &names {
                        let leaf = n.rsplit("::").next().unwrap_or(n);
                        if !allowed.contains(&leaf) && !allowed.contains(&n.as_str()) {
                            wrong.push(format!(
                                "{}: {from} takes {to}::{n}, which is not data it is handed",
                                f.strip_prefix(&src).unwrap().display()
                            ));
                        }
                    }
                }
            }
            edges.insert((from.clone(), to));
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
    // No circle between top-level modules (implied by the ranks, checked outright).
    for (a, b) in &edges {
        assert!(
            !edges.contains(&(b.clone(), a.clone())),
            "{a} and {b} import each other"
        );
    }
}

#[test]
fn only_the_catalog_and_the_drivers_name_a_platform() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let catalog: toml::Value =
        toml::from_str(&std::fs::read_to_string(root.join("plugins.toml")).unwrap()).unwrap();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for (name, p) in catalog["platforms"].as_table().unwrap() {
        names.insert(name.clone());
        for a in p
            .get("aliases")
            .and_then(|a| a.as_array())
            .into_iter()
            .flatten()
        {
            names.insert(a.as_str().unwrap().to_string());
        }
    }
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let m = module_of(&src, f).unwrap_or_default();
        if m == "catalog" || m == "driver" {
            continue;
        }
        let code = code(&std::fs::read_to_string(f).unwrap());
        for n in &names {
            if code.contains(&format!("\"{n}\"")) {
                wrong.push(format!("{}: names platform {n:?}", f.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
