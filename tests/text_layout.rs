//! The code layout (build.rs, `build/text-order.ld`, docs/proof.md issue 18 "code layout"):
//! the functions Mercury's processes run are linked first in `.text`, in the script's order,
//! before every other function, so a real attach faults in one stretch of code rather than
//! 64 KiB windows all over `.text`. Read from the built binary's section headers and
//! symbol table (`readelf`, from binutils, which the toolchain's linker needs): a build that
//! dropped the script, or a script gone stale, fails here.
#![cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;

use common::readelf;

/// The script's function patterns, in order (`NAME` or `PREFIX*`, from each line's
/// `*(.text.NAME .text.unlikely.NAME)`).
fn patterns() -> Vec<String> {
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/build/text-order.ld"))
            .unwrap();
    script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("*(.text."))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// `.text`'s address range.
fn text_section() -> (u64, u64) {
    let sections = readelf(&["-SW"]);
    let line = sections
        .lines()
        .find(|l| l.contains(" .text "))
        .unwrap_or_else(|| panic!("no .text section:\n{sections}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    let at = f.iter().position(|w| *w == ".text").unwrap();
    let addr = u64::from_str_radix(f[at + 2], 16).unwrap();
    let size = u64::from_str_radix(f[at + 4], 16).unwrap();
    (addr, addr + size)
}

#[test]
fn the_functions_that_run_are_linked_first_in_the_scripts_order() {
    let pats = patterns();
    assert!(pats.len() > 500, "{} patterns", pats.len());
    let (start, end) = text_section();

    // Every function symbol in .text, by exact name and, for Rust's legacy names, by the
    // name up to its hash (what the script's `PREFIX*` patterns match).
    let mut by_name: HashMap<String, Vec<u64>> = HashMap::new();
    let mut all: Vec<(u64, String)> = Vec::new();
    for l in readelf(&["-sW"]).lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 || f[3] != "FUNC" || f[6] == "UND" {
            continue;
        }
        let Ok(addr) = u64::from_str_radix(f[1], 16) else {
            continue;
        };
        if !(start..end).contains(&addr) {
            continue;
        }
        let name = f[7].split('@').next().unwrap_or(f[7]);
        all.push((addr, name.to_string()));
        by_name.entry(name.to_string()).or_default().push(addr);
        if let Some(at) = name.rfind("17h") {
            if name.len() == at + 3 + 16 + 1 && name.ends_with('E') {
                by_name
                    .entry(format!("{}*", &name[..at + 3]))
                    .or_default()
                    .push(addr);
            }
        }
    }

    // The named stretch: .text from the first function the script names up to the first it
    // does not name. (The standard library's own functions, v0 names `_R…`, are left out: a
    // debug build links them from the prebuilt std, whose generic instances it shares, not
    // from sections of its own.)
    let named: std::collections::HashSet<u64> = pats
        .iter()
        .filter_map(|p| by_name.get(p.as_str()))
        .flatten()
        .copied()
        .collect();
    // The script's first lines place code by object file and section (the C start files,
    // the OpenSSL stubs, SHA): that block comes before the first named function.
    let fixed = [
        "_start",
        "frame_dummy",
        "atexit",
        "EVP_aes_256_ctr",
        "mercury_openssl_bind",
        "_ZN4sha26sha2563x8613digest_blocks17h*",
    ];
    let first_named = pats
        .iter()
        .filter(|p| !fixed.contains(&p.as_str()))
        .filter_map(|p| by_name.get(p.as_str()))
        .flatten()
        .min()
        .copied()
        .unwrap();
    let lowest = |name: &str| by_name.get(name).and_then(|a| a.iter().min().copied());
    for fixed in fixed {
        let at = lowest(fixed).unwrap_or_else(|| panic!("no {fixed} in .text"));
        assert!(
            at < first_named,
            "{fixed} at {at:#x}, after the first named function at {first_named:#x}"
        );
    }
    let (stretch_end, first_other) = all
        .iter()
        .filter(|(a, n)| *a > first_named && !named.contains(a) && !n.starts_with("_R"))
        .min()
        .map(|(a, n)| (*a, n.clone()))
        .unwrap();
    // In it, each pattern's functions come after the previous pattern's.
    let mut placed = 0;
    let mut last = (String::new(), start);
    for p in pats
        .iter()
        .filter(|p| !p.starts_with("_R") && !fixed.contains(&p.as_str()))
    {
        let Some(lo) = by_name.get(p.as_str()).and_then(|a| a.iter().min()) else {
            continue;
        };
        if *lo >= stretch_end {
            continue;
        }
        placed += 1;
        assert!(
            *lo >= last.1,
            "{p} at {lo:#x} before {} at {:#x}",
            last.0,
            last.1
        );
        last = (p.clone(), *lo);
    }
    // Most of the script names functions this build has and placed (a debug build inlines
    // less, so has them too); a build without the script, or a script gone stale
    // (regenerate it with bench/issue18/symbol-order), would not.
    assert!(
        placed * 10 >= pats.iter().filter(|p| !p.starts_with("_R")).count() * 6,
        "only {placed} of {} patterns placed before {first_other} at {stretch_end:#x}",
        pats.len()
    );
}
