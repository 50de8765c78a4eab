//! Intake: where a request enters — command-line flags (`cli`), the SSH forced-command
//! grammar (`forced`), or JSON — and becomes one raw request with the caller's identity.
//! Nothing below this layer sees clap types or unvalidated command strings.

pub mod cli;
pub mod forced;
