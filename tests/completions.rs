//! Shell completion: `--device` completes from the configured device names and aliases
//! (`mercury completions --devices`), in bash (run for real), fish (run for real where fish
//! is installed: CI installs it) and zsh (the generated function, syntax-checked by zsh
//! where installed).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

use common::{mercury, Lab, SimDevice};

fn lab() -> Lab {
    Lab::new(&[
        SimDevice {
            extra: "aliases = [\"leaf-ios.dc1\"]",
            ..SimDevice::new("leaf-ios", "cisco_ios")
        },
        SimDevice::new("leaf-junos", "juniper"),
        SimDevice::new("spine-1", "arista_eos"),
    ])
}

fn path_with_mercury() -> String {
    format!(
        "{}:{}",
        common::mercury_bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn devices_lists_names_and_aliases() {
    let lab = lab();
    let r = lab.mercury(["completions", "--devices"]).run();
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "leaf-ios\nleaf-ios.dc1\nleaf-junos\nspine-1\n");
    let r = mercury(["--config", "/nonexistent.toml", "completions", "--devices"]).run();
    assert_eq!((r.code, r.stdout.as_str()), (78, ""));
}

#[test]
fn bash_completes_device_names() {
    let lab = lab();
    let out = Command::new("bash")
        .args([
            "-c",
            "source <(mercury completions bash); COMP_WORDS=(mercury attach-port --port x --device leaf-); \
             COMP_CWORD=5; _mercury mercury leaf- --device; printf '%s\\n' \"${COMPREPLY[@]}\"",
        ])
        .env("PATH", path_with_mercury())
        .env("MERCURY_CONFIG", &lab.config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "leaf-ios\nleaf-ios.dc1\nleaf-junos\n"
    );
}

#[test]
fn fish_completes_device_names() {
    let script = mercury(["completions", "fish"]).run().stdout;
    assert!(script.contains(
        "-l device -d 'Device name, alias, or switch MAC' -r -f -a \"(__mercury_devices)\""
    ));
    if Command::new("fish").arg("--version").output().is_err() {
        if std::env::var_os("CI").is_some() {
            panic!("fish is needed in CI (scripts/test installs it)");
        }
        eprintln!("SKIPPED: no fish");
        return;
    }
    let lab = lab();
    let out = Command::new("fish")
        .args([
            "-c",
            "mercury completions fish | source; complete -C 'mercury detach-port --device sp'",
        ])
        .env("PATH", path_with_mercury())
        .env("MERCURY_CONFIG", &lab.config)
        .output()
        .unwrap();
    // fish prints each candidate with its description after a tab.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let candidates: Vec<&str> = stdout
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default())
        .collect();
    assert_eq!(candidates, ["spine-1"], "{stdout}");
}

#[test]
fn zsh_script_completes_devices_with_a_function() {
    let script = mercury(["completions", "zsh"]).run().stdout;
    assert!(script.contains("'--device=[Device name, alias, or switch MAC]:NAME:_mercury_devices'"));
    assert!(script.contains("_mercury_devices() {"));
    assert!(!script.contains("'--device=[Device name, alias, or switch MAC]:NAME:_default'"));
    if let Ok(out) = Command::new("zsh")
        .arg("-n")
        .arg("-c")
        .arg(&script)
        .output()
    {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
