//! The `local` transport: commands run on this host, for Mercury running on the DPU itself.
//! Each command's argument vector is executed directly; no shell is ever involved.

use std::time::Instant;

use super::command::run_process;
use super::{Exec, ExecOutput, TransportError};

/// Runs argv on this host.
pub struct LocalExec;

impl Exec for LocalExec {
    fn exec(
        &mut self,
        argv: &[String],
        _line: &str,
        deadline: Instant,
    ) -> Result<ExecOutput, TransportError> {
        run_process(argv, deadline)
    }
}
