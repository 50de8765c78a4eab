//! `mercury-sim`: a stateful multi-vendor switch CLI simulator. See README.md.

fn main() {
    let code = mercury_sim::run(std::env::args().skip(1).collect());
    std::process::exit(code);
}
