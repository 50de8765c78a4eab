//! The session loop: reads lines from stdin, applies faults, hands each line
//! to the platform CLI with the state locked, writes output (paged when the
//! platform pages) and the next prompt, flushing after every prompt.

use crate::cli::{Cli, Env, Flow, Out};
use crate::store::{Store, Transcript};
use std::io::{Read, Write};
use std::time::Duration;

/// Byte-oriented stdin reader: lines end at `\n`, `\r` or `\r\n`; single keys
/// for `--More--`.
pub struct Input {
    src: Box<dyn Read>,
    buf: Vec<u8>,
    pos: usize,
    skip_lf: bool,
    eof: bool,
    /// The descriptor behind `src`, polled to learn whether a line was already there.
    poll: Option<std::io::Stdin>,
    /// The last line read had to be waited for: nothing of it had arrived when the CLI
    /// asked for it.
    pub waited: bool,
}

impl Input {
    /// Read from `src`.
    pub fn new(src: Box<dyn Read>) -> Input {
        Input {
            src,
            buf: Vec::new(),
            pos: 0,
            skip_lf: false,
            eof: false,
            poll: None,
            waited: false,
        }
    }

    /// Read from stdin, polling it to tell a line typed ahead from one waited for.
    pub fn stdin() -> Input {
        Input {
            poll: Some(std::io::stdin()),
            ..Input::new(Box::new(std::io::stdin()))
        }
    }

    /// Input is there already (buffered, or readable without blocking). Asked as soon as a
    /// line has been read, before any of its answer goes out, `true` means the next line was
    /// typed ahead; `false`, that the client waits for an answer before it sends the next
    /// one: one round trip, counted by the device (a line that arrived before the answer
    /// was written cannot be a reply to it).
    pub fn ready(&self) -> bool {
        !self.must_wait()
    }

    /// Nothing is buffered and nothing is readable yet: the CLI waits for its input.
    fn must_wait(&self) -> bool {
        if self.pos < self.buf.len() || self.eof {
            return false;
        }
        let Some(stdin) = &self.poll else {
            return true;
        };
        let mut fds = [rustix::event::PollFd::new(
            stdin,
            rustix::event::PollFlags::IN,
        )];
        let zero = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        !matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
    }

    fn byte(&mut self) -> Option<u8> {
        if self.pos >= self.buf.len() {
            if self.eof {
                return None;
            }
            let mut chunk = [0u8; 4096];
            // A signal interrupting read() is not EOF (the SIGTERM handler
            // thread ends the process with 128+N).
            let mut r = self.src.read(&mut chunk);
            while matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::Interrupted) {
                r = self.src.read(&mut chunk);
            }
            match r {
                Ok(0) | Err(_) => {
                    self.eof = true;
                    return None;
                }
                Ok(n) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(&chunk[..n]);
                    self.pos = 0;
                }
            }
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Some(b)
    }

    /// Next line without its terminator; None at EOF with nothing read.
    pub fn read_line(&mut self) -> Option<String> {
        let mut line = Vec::new();
        self.waited = self.must_wait();
        loop {
            let Some(b) = self.byte() else {
                if line.is_empty() {
                    return None;
                }
                break;
            };
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => break,
                b'\r' => {
                    self.skip_lf = true;
                    break;
                }
                // Backspace / DEL edit the line like a terminal would.
                8 | 127 => {
                    line.pop();
                }
                _ => line.push(b),
            }
        }
        Some(String::from_utf8_lossy(&line).into_owned())
    }

    /// One key (for `--More--`).
    pub fn read_key(&mut self) -> Option<u8> {
        let b = self.byte()?;
        if b == b'\r' {
            self.skip_lf = true;
        }
        Some(b)
    }
}

/// stdout with `\n` → `\r\n` translation (interactive CLI sessions, as a PTY shows).
pub struct Term {
    out: std::io::Stdout,
    crlf: bool,
    /// A write failed (broken pipe): the session is over.
    pub broken: bool,
}

impl Term {
    /// Terminal writer.
    pub fn new(crlf: bool) -> Term {
        Term {
            out: std::io::stdout(),
            crlf,
            broken: false,
        }
    }

    /// Write text (no flush).
    pub fn write(&mut self, s: &str) {
        if s.is_empty() || self.broken {
            return;
        }
        let text = if self.crlf {
            s.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            s.to_string()
        };
        if self.out.write_all(text.as_bytes()).is_err() {
            self.broken = true;
        }
    }

    /// Flush.
    pub fn flush(&mut self) {
        if self.out.flush().is_err() {
            self.broken = true;
        }
    }

    /// Write output, stopping at `more` every `page` lines for a key.
    pub fn write_paged(&mut self, s: &str, pager: Option<(usize, &str)>, input: &mut Input) {
        let Some((page, more)) = pager else {
            self.write(s);
            return;
        };
        let lines: Vec<&str> = s.split_inclusive('\n').collect();
        if page == 0 || lines.len() <= page {
            self.write(s);
            return;
        }
        let mut shown = 0;
        for l in &lines {
            if shown == page {
                self.write(more);
                self.flush();
                let key = input.read_key();
                // Erase the more prompt as IOS does: backspaces, blanks, backspaces.
                let n = more.len();
                let erase = format!("{}{}{}", "\x08".repeat(n), " ".repeat(n), "\x08".repeat(n));
                self.write(&erase);
                match key {
                    None | Some(b'q') | Some(b'Q') => {
                        self.write("\n");
                        return;
                    }
                    _ => shown = 0,
                }
            }
            self.write(l);
            shown += 1;
        }
    }
}

fn slow(env: &Env) {
    if env.faults.slow_ms > 0 {
        std::thread::sleep(Duration::from_millis(env.faults.slow_ms));
    }
}

fn handle_line(
    cli: &mut dyn Cli,
    store: &Store,
    env: &Env,
    line: &str,
    out: &mut Out,
) -> Result<Flow, String> {
    if env.faults.rejects(line) {
        cli.reject(line, out);
        return Ok(Flow::Continue);
    }
    store
        .with(|st| cli.handle(line, st, out))
        .map_err(|e| e.to_string())
}

/// Run an interactive session; returns the exit status.
pub fn interactive(
    cli: &mut dyn Cli,
    store: &Store,
    env: &Env,
    transcript: &Transcript,
    session: u64,
    echo: bool,
    input: &mut Input,
) -> i32 {
    let mut term = Term::new(true);
    slow(env);
    // Whether the next line was there before its answer (here: the login) went out.
    let mut ahead = input.ready();
    term.write(&cli.banner());
    if env.faults.no_prompt_after_login {
        term.flush();
        while let Some(line) = input.read_line() {
            transcript.record(session, "no-prompt", &line, input.waited);
        }
        return 0;
    }
    term.write(&cli.prompt());
    term.flush();
    let mut n: u64 = 0;
    let mut hanging = false;
    loop {
        let Some(line) = input.read_line() else {
            return 0;
        };
        n += 1;
        transcript.record(session, &cli.mode(), &line, !ahead);
        // Asked before anything of this line's answer goes out: a next line already there
        // was sent without waiting for it.
        ahead = input.ready();
        if hanging {
            continue;
        }
        if echo {
            term.write(&line);
            term.write("\n");
        }
        slow(env);
        let mut out = Out::default();
        let flow = match handle_line(cli, store, env, &line, &mut out) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("mercury-sim: {e}");
                return 70;
            }
        };
        term.write_paged(&out.text, cli.pager(), input);
        term.write(&out.err);
        if env.faults.drop_after.is_some_and(|d| n >= d) {
            term.flush();
            return 255;
        }
        if env.faults.hang_after.is_some_and(|h| n >= h) {
            term.flush();
            hanging = true;
            continue;
        }
        if let Flow::Exit(code) = flow {
            term.flush();
            return code;
        }
        term.write(&cli.prompt());
        term.flush();
        if term.broken {
            return 0;
        }
    }
}

/// Run one command (exec mode); returns the exit status.
pub fn exec(
    cli: &mut dyn Cli,
    store: &Store,
    env: &Env,
    transcript: &Transcript,
    session: u64,
    command: &str,
    input: &mut Input,
) -> i32 {
    let shell = cli.is_shell();
    let mut term = Term::new(!shell);
    cli.exec_context();
    // An exec line is its own channel: the device waited for it.
    transcript.record(session, &cli.mode(), command, true);
    let mut ahead = input.ready();
    slow(env);
    let mut out = Out::default();
    let flow = match handle_line(cli, store, env, command, &mut out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mercury-sim: {e}");
            return 70;
        }
    };
    let mut failed = out.failed;
    let mut status = out.status;
    term.write(&out.text);
    eprint!("{}", out.err);
    // Confirmations asked by the command are answered from stdin.
    let mut guard = 0;
    while cli.asking() && guard < 8 {
        guard += 1;
        term.write(&cli.prompt());
        term.flush();
        let answer = input.read_line().unwrap_or_default();
        transcript.record(session, &cli.mode(), &answer, !ahead);
        ahead = input.ready();
        let mut o = Out::default();
        if let Err(e) = handle_line(cli, store, env, &answer, &mut o) {
            eprintln!("mercury-sim: {e}");
            return 70;
        }
        term.write(&o.text);
        eprint!("{}", o.err);
        failed |= o.failed;
        if o.status != 0 {
            status = o.status;
        }
    }
    term.flush();
    if env.faults.drop_after.is_some_and(|d| d <= 1) {
        return 255;
    }
    if env.faults.hang_after.is_some_and(|h| h <= 1) {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if let Flow::Exit(code) = flow {
        if code != 0 {
            return code;
        }
    }
    if shell {
        status
    } else {
        i32::from(failed)
    }
}
