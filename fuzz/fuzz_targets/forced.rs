//! The forced-command tokeniser (`serve-ssh`): whatever `SSH_ORIGINAL_COMMAND` holds,
//! `forced::parse` must not panic, and what it accepts must never carry an option that
//! changes config, request file or diagnostics, or a control or format character; a
//! command without quotes is never accepted with a shell metacharacter in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mercury::intake::forced::{parse, Forced};

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(Forced::Args(args)) = parse(command) {
        for a in &args {
            for bad in ["--config", "--request", "--verbose", "--help", "--version"] {
                assert!(
                    !(a == bad || a.starts_with(&format!("{bad}="))),
                    "{bad} accepted in {command:?}"
                );
            }
            assert!(
                !a.starts_with('-') || a.starts_with("--"),
                "short option {a:?} accepted in {command:?}"
            );
            assert!(
                !a.chars().any(mercury::request::validate::is_dangerous),
                "control or format character accepted in {command:?}"
            );
            assert!(
                command.contains(['\'', '"'])
                    || !a.contains([';', '|', '&', '$', '`', '<', '>', '\\', '(', '#']),
                "shell metacharacter accepted outside quotes in {command:?}"
            );
        }
    }
});
