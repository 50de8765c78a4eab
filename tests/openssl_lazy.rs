//! OpenSSL is bound on first SSH use (`transport::ssh::openssl`, docs/openssl.md): the real
//! binary must not map `libcrypto.so.3` or `libssl.so.3` for `--version` or a dry run, must
//! load libcrypto when an SSH connection is opened, must never load libssl (libssh2 uses
//! none of it), and must report an unusable OpenSSL as a configuration error (78) before it
//! opens a socket. The dynamic loader's own trace
//! (`LD_DEBUG=libs`, glibc) says which libraries a process loads. The SSH tests
//! (`tests/ssh.rs`, `tests/sessions.rs`, `tests/exec_join.rs`) run real sessions through
//! the lazily bound functions.
#![cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::sshd::SshdOptions;
use common::Lab;

/// The shared objects the dynamic loader reports loading (`LD_DEBUG=libs`, "calling init"
/// lines); panics if the trace is missing, so a test can never pass on an empty trace.
fn loaded(stderr: &str) -> Vec<String> {
    let libs: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.split_once("calling init: "))
        .map(|(_, lib)| lib.trim().to_string())
        .collect();
    assert!(
        libs.iter().any(|l| l.ends_with("/libc.so.6")),
        "no LD_DEBUG=libs trace of libc:\n{stderr}"
    );
    libs
}

fn openssl(libs: &[String]) -> Vec<&String> {
    libs.iter()
        .filter(|l| l.contains("/libcrypto.so") || l.contains("/libssl.so"))
        .collect()
}

/// A lab with one device reached over SSH on a port where nothing listens.
fn unreachable_lab() -> (Lab, u16) {
    let lab = Lab::new(&[]);
    let port = lab
        .add_unreachable_ssh_device("gone", "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    (lab, port)
}

fn attach(lab: &Lab, device: &str, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "attach-port",
        "--device",
        device,
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "CHG-openssl",
    ];
    args.extend_from_slice(extra);
    lab.mercury(args)
}

#[test]
fn version_does_not_load_openssl() {
    let r = common::mercury(["--version"]).env("LD_DEBUG", "libs").run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let libs = loaded(&r.stderr);
    assert_eq!(openssl(&libs), Vec::<&String>::new(), "{libs:?}");
}

#[test]
fn a_dry_run_of_an_ssh_device_does_not_load_openssl() {
    let (lab, _port) = unreachable_lab();
    let r = attach(&lab, "gone", &["--dry-run"])
        .env("LD_DEBUG", "libs")
        .run();
    let v = r.expect(0);
    assert_eq!(v["dry_run"], true, "{v}");
    let libs = loaded(&r.stderr);
    assert_eq!(openssl(&libs), Vec::<&String>::new(), "{libs:?}");
}

/// The control for the two tests above: the same trace shows libcrypto once an SSH
/// connection is attempted (loaded before the TCP connect, which is then refused), and no
/// libssl.
#[test]
fn an_ssh_connection_loads_libcrypto_before_connecting() {
    let (lab, port) = unreachable_lab();
    let r = attach(&lab, "gone", &[]).env("LD_DEBUG", "libs").run();
    let v = r.expect(69);
    let m = v["msg"].as_str().unwrap_or_default();
    assert!(
        m.starts_with(&format!("TCP connect to 127.0.0.1:{port}")),
        "{m}"
    );
    let libs = loaded(&r.stderr);
    let found = openssl(&libs);
    assert!(
        found.iter().any(|l| l.contains("/libcrypto.so.3"))
            && !found.iter().any(|l| l.contains("/libssl.so")),
        "{libs:?}"
    );
}

/// A whole session over OpenSSH (key exchange, host key, public-key login, the change and
/// the save) needs libcrypto only: openssl-sys's initialisation, which libssh2-sys runs
/// before the first session, would call libssl's `OPENSSL_init_ssl` and load libssl and its
/// error strings (~0.5 MiB resident) had Mercury not initialised libcrypto itself.
#[test]
fn a_real_ssh_session_never_loads_libssl() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "cisco_ios", &sshd, &key, "");
    let r = lab
        .mercury([
            "add-network",
            "--device",
            "leaf",
            "--vlan",
            "120",
            "--reason",
            "CHG-openssl",
        ])
        .env("LD_DEBUG", "libs")
        .run();
    let v = r.expect(0);
    assert_eq!(v["changed"], true, "{v}");
    // The change reached the device and was saved, through the lazily bound libcrypto.
    let state = lab.settled_state("leaf");
    for place in ["running", "saved"] {
        assert!(
            state[place]["vlans"].get("120").is_some(),
            "VLAN 120 not {place}: {state}"
        );
    }
    let libs = loaded(&r.stderr);
    let found = openssl(&libs);
    assert!(
        found.iter().any(|l| l.contains("/libcrypto.so.3")),
        "{libs:?}"
    );
    assert!(!found.iter().any(|l| l.contains("/libssl.so")), "{libs:?}");
}

/// A `libcrypto.so.3` that is not OpenSSL (a copy of zlib, first on `LD_LIBRARY_PATH`):
/// the run stops with a configuration error naming OpenSSL, before any TCP connect.
#[test]
fn an_unusable_openssl_is_a_config_error_before_any_connection() {
    let zlib = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib64/libz.so.1",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libz.so.1 (zlib1g; dpkg itself depends on it)");
    let (lab, _port) = unreachable_lab();
    let fake = lab.path("fakelib");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::copy(zlib, fake.join("libcrypto.so.3")).unwrap();
    let r = attach(&lab, "gone", &[])
        .env("LD_LIBRARY_PATH", fake.to_str().unwrap())
        .run();
    let v = r.expect(78);
    let m = v["msg"].as_str().unwrap_or_default();
    assert!(m.contains("cannot load OpenSSL for SSH"), "{m}");
    assert!(!m.contains("TCP connect"), "{m}");
    assert_eq!(v["error_kind"], "config", "{v}");
    assert_eq!(v["commands"], serde_json::json!([]), "{v}");
}

/// The binary records no dependency on either library and imports no OpenSSL symbol (its
/// stubs are hidden), so the dynamic loader never maps OpenSSL at start.
#[test]
fn the_binary_needs_no_openssl_library() {
    let dynamic = common::readelf(&["-d", "--dyn-syms", "-W"]);
    assert!(dynamic.contains("(NEEDED)"), "{dynamic}");
    assert!(
        !dynamic.contains("libssl") && !dynamic.contains("libcrypto"),
        "{dynamic}"
    );
    let imports: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains(" UND ") && l.contains("OPENSSL"))
        .collect();
    assert_eq!(imports, Vec::<&str>::new());
}
