#!/usr/bin/env bash
# What a 64-request burst on one switch costs the device, counted (not timed): the lines the
# simulator received, its configuration-mode entries, show lines, saves and round trips (the
# lines it had to wait for, its transcript's `waited`), for two mercury
# binaries side by side (e.g. main's and this branch's release builds), interleaved.
#
#   bench/burst/lines.sh BEFORE_BIN NOW_BIN SIM_BIN [ROUNDS] [SLOW_MS]
#
# mercury-sim (cisco_ios, a stack with 336 ports) over the command transport,
# max_sessions = 1, read before write on (the default), manage_vlans; every round
# alternates the VLAN so that every request changes its port. Also prints the makespan
# and the load average (a makespan on a shared machine is noise; the counts are not).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BEFORE_BIN NOW_BIN SIM_BIN [ROUNDS] [SLOW_MS]" >&2; exit 64; }
declare -A bins=([before]=$(realpath "$1") [now]=$(realpath "$2"))
sim=$(realpath "$3"); rounds=${4:-3}; slow=${5:-5}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cat > "$dir/mercury.toml" <<CONF
[defaults]
lock_dir = "locks"
audit_log = "audit.log"
allowed_vlans = ["100-199"]
manage_vlans = true
default_vlan = 10
lock_timeout = 300
request_timeout = 300

[devices.leaf]
platform = "cisco_ios"
transport = "command"
argv = ["$sim", "--platform", "cisco_ios", "--hostname", "leaf", "--state", "$dir/leaf.json", "--transcript", "$dir/leaf.transcript", "--fault", "slow=$slow"]
max_sessions = 1
CONF
chmod 600 "$dir/mercury.toml"
for v in 10 120 140; do "${bins[now]}" --config "$dir/mercury.toml" add-network --device leaf --vlan $v --reason setup > /dev/null; done
python3 - "$dir/leaf.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for where in ("running", "saved"):
    t = dict(s[where]["ports"]["GigabitEthernet1/0/1"])
    for j in range(336):
        s[where]["ports"].setdefault(f"GigabitEthernet{j // 48 + 1}/0/{j % 48 + 1}", dict(t))
json.dump(s, open(sys.argv[1], "w"))
PY
v=140
for r in $(seq "$rounds"); do for b in before now; do
    v=$([ $v = 120 ] && echo 140 || echo 120)
    : > "$dir/leaf.transcript"; : > "$dir/audit.log"
    t0=$EPOCHREALTIME; pids=()
    for ((j = 0; j < 64; j++)); do
        "${bins[$b]}" --config "$dir/mercury.toml" attach-port --device leaf \
            --port "Gi$((j / 48 + 1))/0/$((j % 48 + 1))" --vlan $v --reason bench > /dev/null 2>&1 &
        pids+=($!)
    done
    f=0; for p in "${pids[@]}"; do wait "$p" || f=$((f + 1)); done
    el=$(python3 -c "print('%.2f' % ($EPOCHREALTIME - $t0))")
    python3 - "$dir" "$b" "$r" "$el" "$f" <<'PY'
import json, sys
d, b, r, el, f = sys.argv[1:]
lines = [json.loads(l) for l in open(f"{d}/leaf.transcript")]
fin = [x for x in map(json.loads, open(f"{d}/audit.log")) if x["event"] == "finished"]
changed = sum(1 for x in fin if x["how"]["changed"])
c = lambda p: sum(1 for l in lines if l["line"].startswith(p))
load = open("/proc/loadavg").read().split()[0]
print(f"{b} round {r}: {el} s, fails {f}, changed {changed}/64, sessions {len({l['session'] for l in lines})}, "
      f"lines received {len(lines)}, configure terminal {c('configure terminal')}, show {c('show ')}, "
      f"saves {c('copy running')}, round trips (lines the device waited for) {sum(1 for l in lines if l.get('waited'))}, load {load}")
PY
done; done
