//! `mercury-sim`: a stateful multi-vendor switch CLI simulator. See README.md.

fn main() {
    let mut args = std::env::args();
    let argv0 = args.next();
    let code = mercury_sim::main(argv0, args.collect());
    std::process::exit(code);
}
