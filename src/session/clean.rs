//! The output cleaner: strips `\r`, applies backspaces and drops ANSI escape sequences and
//! other control characters, across chunk boundaries, before any prompt matching.

/// Strips `\r`, applies backspaces and drops ANSI escape sequences and other control
/// characters, across chunk boundaries.
#[derive(Debug, Default)]
pub struct Cleaner {
    state: EscState,
    pending: Vec<u8>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum EscState {
    #[default]
    Text,
    Esc,
    Csi,
    Osc,
    OscEsc,
}

impl Cleaner {
    /// Feeds raw bytes, appending clean text to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut String) {
        for &b in bytes {
            match self.state {
                EscState::Text => match b {
                    0x1b => self.state = EscState::Esc,
                    b'\r' | 0x00 | 0x07 => {}
                    0x08 => {
                        self.flush(out);
                        if !out.ends_with('\n') {
                            out.pop();
                        }
                    }
                    b'\n' | b'\t' => {
                        self.flush(out);
                        out.push(b as char);
                    }
                    b if b < 0x20 || b == 0x7f => {}
                    b => {
                        self.pending.push(b);
                        if b < 0x80
                            || std::str::from_utf8(&self.pending).is_ok()
                            || self.pending.len() >= 4
                        {
                            self.flush(out);
                        }
                    }
                },
                EscState::Esc => {
                    self.state = match b {
                        b'[' => EscState::Csi,
                        b']' => EscState::Osc,
                        _ => EscState::Text,
                    }
                }
                EscState::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.state = EscState::Text;
                    }
                }
                EscState::Osc => match b {
                    0x07 => self.state = EscState::Text,
                    0x1b => self.state = EscState::OscEsc,
                    _ => {}
                },
                EscState::OscEsc => self.state = EscState::Text,
            }
        }
    }

    fn flush(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            // C1 controls arrive UTF-8 encoded (U+009B is an 8-bit CSI): dropped like the
            // ASCII ones.
            out.extend(
                String::from_utf8_lossy(&self.pending)
                    .chars()
                    .filter(|c| !c.is_control()),
            );
            self.pending.clear();
        }
    }
}
