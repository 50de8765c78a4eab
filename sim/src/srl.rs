//! Placeholder (filled in below).

use crate::cli::{Cli, Env, Flow, Out};
use crate::model::DeviceState;

/// Session.
pub struct Srl {
    host: String,
}

impl Srl {
    /// New session.
    pub fn new(env: &Env) -> Srl {
        Srl { host: env.hostname.clone() }
    }
}

impl Cli for Srl {
    fn prompt(&self) -> String {
        format!("{}> ", self.host)
    }
    fn mode(&self) -> String {
        "exec".into()
    }
    fn handle(&mut self, _line: &str, _st: &mut DeviceState, out: &mut Out) -> Flow {
        out.fail("Error: not implemented");
        Flow::Continue
    }
    fn reject(&mut self, _line: &str, out: &mut Out) {
        out.fail("Error");
    }
}
