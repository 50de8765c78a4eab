#!/usr/bin/env bash
# Fuzzing (not a test): runs each cargo-fuzz target (fuzz/fuzz_targets) for a bounded time.
#
#   bench/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     # default 60 s; all targets
#
# Targets: request (RawRequest::from_json + Request::from_raw), forced (the serve-ssh
# tokeniser, forced::parse), cleaner (session::Cleaner: chunking invariance, no control
# characters kept), session (the prompt matcher and CLI session against a fuzzed device,
# every catalog CLI platform). Installs cargo-fuzz if missing. With a stable toolchain it
# sets RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags for the sanitizer and coverage).
# Corpora grow in fuzz/corpus/TARGET (git-ignored); seeds come from fuzz/seeds/TARGET.
# A crash leaves its input in fuzz/artifacts/TARGET/ and stops the script: add it as a
# regression test in the normal test suite, named after what broke, and keep the input in
# fuzz/regressions/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(request forced cleaner session)
command -v cargo-fuzz > /dev/null || cargo install cargo-fuzz --locked
if ! rustc --version | grep -q nightly; then export RUSTC_BOOTSTRAP=1; fi
cargo fuzz build --fuzz-dir fuzz
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    seeds=()
    [ -d "fuzz/seeds/$t" ] && seeds+=("fuzz/seeds/$t")
    # Inputs that once failed (each also has a regression test) are replayed first.
    [ -d "fuzz/regressions/$t" ] && seeds+=("fuzz/regressions/$t")
    echo "== $t: ${secs}s" >&2
    cargo fuzz run --fuzz-dir fuzz "$t" "fuzz/corpus/$t" "${seeds[@]}" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 2>&1 \
        | grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' || true
    found=$(find "fuzz/artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null)
    if [ -n "$found" ]; then
        echo "$t: FOUND A FAILURE (reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz $t FILE):" >&2
        echo "$found" >&2
        exit 1
    fi
done
echo "no crashes" >&2
