//! How the binary is linked on x86_64 glibc Linux (`build.rs`, `.cargo/config.toml`,
//! docs/proof.md "Close to the floor"): every shared library the dynamic loader must map
//! and relocate costs each process page faults before `main`, so the binary asks for libc
//! alone. GCC's unwinder is linked statically (`libgcc_eh.a`, not `libgcc_s.so.1`), zlib
//! is linked statically (libssh2's compression, never enabled), and OpenSSL is bound on
//! first SSH use (tests/openssl_lazy.rs). A panic must still unwind into `run::guarded`.
#![cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

/// The `NEEDED` entries of the binary's dynamic section, as `readelf -d` prints them.
fn needed() -> Vec<String> {
    let text = common::readelf(&["-d", "-W"]);
    let libs: Vec<String> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split_once('[')?.1.trim_end_matches(']').to_string()))
        .collect();
    assert!(
        libs.iter().any(|l| l.starts_with("libc.so")),
        "no NEEDED libc in readelf's output:\n{text}"
    );
    libs
}

#[test]
fn the_binary_needs_libc_and_nothing_else_the_loader_would_map_in_every_process() {
    let libs = needed();
    for lib in &libs {
        assert!(
            lib.starts_with("libc.so") || lib.starts_with("ld-linux"),
            "mercury needs {lib} at start-up: {libs:?}"
        );
    }
}

#[test]
fn a_panic_unwinds_through_the_statically_linked_unwinder() {
    // This test binary links the mercury library the way the mercury binary does, so it
    // has the static unwinder too: libgcc_s must not be mapped, or the test would prove
    // nothing about it.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(
        maps.contains("libc.so.6"),
        "no libc in /proc/self/maps:\n{maps}"
    );
    assert!(
        !maps.contains("libgcc_s"),
        "libgcc_s is mapped, so the unwinder is not the static one"
    );
    let out = mercury::run::guarded(|| panic!("unwound through libgcc_eh"));
    assert_eq!(out.code, 70);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["error_kind"], "internal", "{v}");
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("unwound through libgcc_eh"),
        "{v}"
    );
}

/// The glibc this test runs on (the one the binary was built against: tests build
/// natively), from `getconf GNU_LIBC_VERSION` (`glibc 2.36`).
fn glibc() -> (u32, u32) {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .expect("getconf runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.trim().strip_prefix("glibc ").expect("glibc N.M");
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

#[test]
fn relative_relocations_are_packed_where_glibc_applies_them() {
    let text = common::readelf(&["-d", "-W"]);
    assert!(text.contains("(NEEDED)"), "no dynamic section:\n{text}");
    let glibc = glibc();
    assert_eq!(
        text.contains("(RELR)"),
        glibc >= (2, 36),
        "DT_RELR present iff glibc {glibc:?} applies it:\n{text}"
    );
}
