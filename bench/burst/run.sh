#!/usr/bin/env bash
# Burst benchmark: many concurrent `mercury attach-port` processes against simulated
# switches (mercury-sim over the command transport), with and without request coalescing.
#
#   bench/burst/run.sh [--slow MS] [--connect MS] [--only NAME] [--no-scale]
#
# --slow MS     per-response latency of the simulated CLI (mercury-sim --fault slow=MS)
# --connect MS  connection set-up cost before the banner (a `sleep` in front of the
#               simulator, standing in for TCP + SSH handshake + authentication)
#
# Scenarios: one request alone (the unit), 64 concurrent on one switch (different ports),
# 200 concurrent across 4 switches; each with coalescing on and off. For each it prints
# makespan, failures, the simulator's max concurrent sessions per device, sessions opened,
# and checks the final state (every requested port in VLAN 120, saved).
# Then the scale curve: 1, 8, 32, 128 ports changed on one switch as one batched request
# (`ports` list), as one request per port all at once (coalescing on), and as one request
# per port one after another (--no-scale skips it; --only scale runs only it).
# Needs: cargo, python3 (result parsing). Release build. Everything on this machine.
set -euo pipefail
cd "$(dirname "$0")/../.."

slow=20
connect=300
only=""
scale=1
while [ $# -gt 0 ]; do
    case "$1" in
        --slow) slow=$2; shift 2 ;;
        --connect) connect=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --no-scale) scale=0; shift ;;
        *) echo "usage: $0 [--slow MS] [--connect MS] [--only NAME] [--no-scale]" >&2; exit 64 ;;
    esac
done

cargo build --release --workspace --bins --quiet
bin="$PWD/target/release"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
connect_s=$(python3 -c "print($connect/1000)")

# make_lab DIR DEVICES COALESCE
make_lab() {
    local dir=$1 devices=$2 coalesce=$3
    mkdir -p "$dir"
    {
        echo '[defaults]'
        echo 'lock_dir = "locks"'
        echo 'audit_log = "audit.log"'
        echo 'default_vlan = 10'
        echo 'allowed_vlans = ["10", "100-199"]'
        echo 'manage_vlans = true'
        echo 'lock_timeout = 300'
        echo 'command_timeout = 30'
        echo 'request_timeout = 600'
        echo
        echo '[coalesce]'
        echo "enabled = $coalesce"
        echo 'max_batch = 64'
        for d in $(seq 1 "$devices"); do
            echo
            echo "[devices.leaf$d]"
            echo 'platform = "cisco_ios"'
            echo 'transport = "command"'
            echo "argv = [\"/bin/sh\", \"-c\", \"sleep $connect_s; exec \\\"\$@\\\"\", \"connect\", \"$bin/mercury-sim\", \"--platform\", \"cisco_ios\", \"--hostname\", \"leaf$d\", \"--state\", \"$dir/leaf$d.json\", \"--fault\", \"slow=$slow\"]"
        done
    } > "$dir/mercury.toml"
    chmod 600 "$dir/mercury.toml"
    for d in $(seq 1 "$devices"); do
        for v in 10 120; do
            "$bin/mercury" --config "$dir/mercury.toml" add-network --device "leaf$d" --vlan $v \
                --reason setup > /dev/null
        done
        # A three-member stack: the simulator's inventory has 48 + 4 ports, the burst wants
        # 64 and the scale curve 128 different ones; it serves any port its state file holds.
        python3 - "$dir/leaf$d.json" <<'STACK'
import json, sys
path = sys.argv[1]
s = json.load(open(path))
for where in ("running", "saved"):
    template = dict(s[where]["ports"]["GigabitEthernet1/0/1"])
    for i in range(1, 49):
        for member in (2, 3):
            s[where]["ports"].setdefault(f"GigabitEthernet{member}/0/{i}", dict(template))
json.dump(s, open(path, "w"))
STACK
    done
}

port_of() { # index (0-based) on one switch -> port name
    local j=$1
    echo "Gi$((j / 48 + 1))/0/$((j % 48 + 1))"
}

# run_burst NAME DEVICES REQUESTS COALESCE
run_burst() {
    local name=$1 devices=$2 requests=$3 coalesce=$4
    if [ -n "$only" ] && [ "$only" != "$name" ]; then return; fi
    local dir="$work/$name"
    make_lab "$dir" "$devices" "$coalesce"
    mkdir -p "$dir/out"
    local start end
    start=$(date +%s.%N)
    for i in $(seq 0 $((requests - 1))); do
        local d=$((i % devices + 1)) j=$((i / devices))
        (
            set +e
            "$bin/mercury" --config "$dir/mercury.toml" attach-port --device "leaf$d" \
                --port "$(port_of $j)" --vlan 120 --reason bench --request-id "bench-$i" \
                > "$dir/out/$i.json" 2> "$dir/out/$i.err"
            echo $? > "$dir/out/$i.rc"
        ) &
    done
    wait
    end=$(date +%s.%N)
    for d in $(seq 1 "$devices"); do
        "$bin/mercury-sim" show --state "$dir/leaf$d.json" > "$dir/state$d.json"
    done
    python3 - "$dir" "$devices" "$requests" "$start" "$end" "$name" "$coalesce" <<'EOF'
import json, sys, os, statistics
d, devices, requests, start, end, name, coalesce = sys.argv[1:]
devices, requests = int(devices), int(requests)
rcs, elapsed, roles = [], [], {}
for i in range(requests):
    rcs.append(int(open(f"{d}/out/{i}.rc").read()))
    try:
        v = json.load(open(f"{d}/out/{i}.json"))
        elapsed.append(v["elapsed_ms"])
        role = ((v.get("data") or {}).get("coalesced") or {}).get("role", "alone")
        roles[role] = roles.get(role, 0) + 1
    except Exception:
        pass
fails = sum(1 for r in rcs if r != 0)
max_seen, total, wrong = 0, 0, 0
for k in range(1, devices + 1):
    s = json.load(open(f"{d}/state{k}.json"))
    max_seen = max(max_seen, s["sessions"]["max_seen"])
    total += s["sessions"]["total"] - 2  # minus the two set-up add-network sessions
    per = [i for i in range(requests) if i % devices + 1 == k]
    for n, i in enumerate(per):
        j = i // devices
        port = f"GigabitEthernet{j // 48 + 1}/0/{j % 48 + 1}"
        for where in ("running", "saved"):
            if s[where]["ports"][port]["access_vlan"] != 120 and rcs[i] == 0:
                wrong += 1
makespan = float(end) - float(start)
p50 = statistics.median(elapsed) / 1000 if elapsed else 0
print(f"| {name} | {requests} on {devices} | {'on' if coalesce == 'true' else 'off'} | "
      f"{makespan:.2f} s | {fails} | {max_seen} | {total} | {p50:.2f} s | "
      f"{max(elapsed)/1000 if elapsed else 0:.2f} s | {wrong} | "
      + ", ".join(f"{k} {v}" for k, v in sorted(roles.items())) + " |")
EOF
}

echo "# burst benchmark: slow=${slow} ms per response, connect ${connect} ms; $(nproc) CPUs, $(uname -sr)"
echo
echo "| scenario | requests | coalesce | makespan | failures | max sessions | sessions opened | p50 latency | max latency | wrong state | roles |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
run_burst single 1 1 true
run_burst one-switch-64 1 64 true
run_burst one-switch-64-off 1 64 false
run_burst four-switches-200 4 200 true
run_burst four-switches-200-off 4 200 false

# scale_point N: N ports on one switch, three ways; prints one table row.
scale_point() {
    local n=$1 dir ports="" t0 t1 batched concurrent sequential fails=0
    # Batched: one request, one session.
    dir="$work/scale-$n-batched"; make_lab "$dir" 1 true
    for j in $(seq 0 $((n - 1))); do ports="$ports${ports:+,}\"$(port_of "$j")\""; done
    t0=$(date +%s.%N)
    echo "{\"op\":\"attach_port\",\"device\":\"leaf1\",\"vlan\":120,\"reason\":\"bench\",\"ports\":[$ports]}" \
        | "$bin/mercury" --config "$dir/mercury.toml" run > "$dir/out.json" || fails=$((fails + 1))
    t1=$(date +%s.%N); batched=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
    # One request per port, all at once (coalescing on).
    dir="$work/scale-$n-concurrent"; make_lab "$dir" 1 true
    t0=$(date +%s.%N)
    for j in $(seq 0 $((n - 1))); do
        "$bin/mercury" --config "$dir/mercury.toml" attach-port --device leaf1 --port "$(port_of "$j")" \
            --vlan 120 --reason bench > /dev/null 2>&1 || echo x >> "$dir/fails" &
    done
    wait
    t1=$(date +%s.%N); concurrent=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
    [ -f "$dir/fails" ] && fails=$((fails + $(wc -l < "$dir/fails")))
    # One request per port, one after another.
    dir="$work/scale-$n-sequential"; make_lab "$dir" 1 true
    t0=$(date +%s.%N)
    for j in $(seq 0 $((n - 1))); do
        "$bin/mercury" --config "$dir/mercury.toml" attach-port --device leaf1 --port "$(port_of "$j")" \
            --vlan 120 --reason bench > /dev/null 2>&1 || fails=$((fails + 1))
    done
    t1=$(date +%s.%N); sequential=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
    # Every way must have left all N ports in VLAN 120 (running and saved).
    local wrong=0 way
    for way in batched concurrent sequential; do
        "$bin/mercury-sim" show --state "$work/scale-$n-$way/leaf1.json" > "$work/scale-$n-$way/state.json"
        wrong=$((wrong + $(python3 - "$work/scale-$n-$way/state.json" "$n" <<'CHECK'
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2])
bad = 0
for j in range(n):
    port = f"GigabitEthernet{j // 48 + 1}/0/{j % 48 + 1}"
    for where in ("running", "saved"):
        bad += s[where]["ports"][port]["access_vlan"] != 120
print(bad)
CHECK
)))
    done
    printf '| %s | %.2f s | %.2f s | %.2f s | %.1f x | %.1f x | %s | %s |\n' "$n" "$batched" "$concurrent" "$sequential" \
        "$(awk -v a="$sequential" -v b="$batched" 'BEGIN {print a / b}')" \
        "$(awk -v a="$concurrent" -v b="$batched" 'BEGIN {print a / b}')" "$fails" "$wrong"
}

if [ "$scale" = 1 ] && { [ -z "$only" ] || [ "$only" = scale ]; }; then
    echo
    echo "# scale curve: ports changed on one switch (slow=${slow} ms, connect ${connect} ms)"
    echo
    echo "| ports | one batched request | one request per port, concurrent | one request per port, sequential | sequential / batched | concurrent / batched | failures | wrong state |"
    echo "|---|---|---|---|---|---|---|---|"
    for n in 1 8 32 128; do scale_point "$n"; done
fi
