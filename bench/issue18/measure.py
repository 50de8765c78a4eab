#!/usr/bin/env python3
"""Measures the rows of issue 18's table (bench/issue18/run sets up sshd and the configs).

Every process is started through `peak` (bench/issue18/peak.c, built by `run`), a ~1 MiB
C process that forks it and reaps it with wait4, which gives that one child's CPU time
(user + system) and peak RSS from the kernel. (Reaped straight from Python, a child is
charged Python's ~13 MiB resident set: the kernel keeps the high-water mark of the memory
it was spawned from.) Wall time is `peak`'s monotonic clock from its fork to the reap:
starting a process from Python costs 4-5 ms of its own on this machine, which the
figures before 2026-12-01 19:50 UTC included (`--version` "3.8 ms" then). Binaries that are compared run interleaved (one run
of each per round), and every figure is a median over the rounds.

  measure.py ENV_JSON
"""
import json
import os
import statistics
import subprocess
import sys
import time


PEAK = None  # path of the `peak` helper, from ENV_JSON
PEAK_OUT = None  # where `peak` writes its figures


def run(argv, stdin=subprocess.DEVNULL):
    """(wall ms, cpu ms, peak RSS KiB, exit code, stdout) of one process."""
    p = subprocess.Popen([PEAK, PEAK_OUT] + argv, stdin=stdin, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    code = p.wait()
    with open(PEAK_OUT) as f:
        rss, cpu, wall = f.read().split()
    return float(wall), float(cpu), int(rss), code, out


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    global PEAK, PEAK_OUT
    env = json.load(open(sys.argv[1]))
    PEAK, PEAK_OUT = env["peak"], env["peak_out"]
    runs = env["runs"]
    bins = env["binaries"]  # name -> path, in column order
    cfg = env["config"]
    rows = {}

    def each(name, argv_of, n=runs):
        """Interleaved: round r runs every binary once."""
        res = {b: [] for b in bins}
        for _ in range(n):
            for b, path in bins.items():
                res[b].append(run(argv_of(path)))
        return res

    # 1. CPU per --dry-run attach-port (config + catalog + plan + result).
    dry = each("dry", lambda m: [m, "--config", cfg, "--dry-run", "--format", "json", "attach-port",
                                 "--device", "leaf", "--port", "Gi1/0/5", "--vlan", "120",
                                 "--reason", "bench"])
    rows["cpu"] = {b: med([r[1] for r in v]) for b, v in dry.items()}
    rows["dry_rss"] = {b: med([r[2] for r in v]) / 1024 for b, v in dry.items()}
    # 2. --version wall.
    ver = each("version", lambda m: [m, "--version"])
    rows["version"] = {b: med([r[0] for r in v]) for b, v in ver.items()}
    # 3 + 4. Real attach-port over SSH: peak RSS, and p50 against the libssh2 floor, the
    # floor interleaved with the binaries.
    attach = {b: [] for b in bins}
    floor = []
    quick = []
    flip = 0
    for _ in range(runs):
        for b, path in bins.items():
            # Alternate the VLAN so every run changes the port (a repeat would be a no-op).
            flip ^= 1
            vlan = "120" if flip else "121"
            attach[b].append(run([path, "--config", cfg, "--format", "json", "attach-port",
                                  "--device", "leaf", "--port", "Gi1/0/5", "--vlan", vlan,
                                  "--reason", "bench"]))
        floor.append(run([env["floor"], "127.0.0.1", str(env["port"]), "root", env["key"], "true"]))
        # The same exec floor without the delayed-ACK stall Mercury avoids (TCP_QUICKACK):
        # the fair reference once Mercury no longer pays it (docs/proof.md).
        quick.append(run([env["floor"], "--quickack", "127.0.0.1", str(env["port"]), "root",
                          env["key"], "true"]))
    fails = {b: sum(1 for r in v if r[3] != 0) for b, v in attach.items()}
    rows["rss"] = {b: med([r[2] for r in v]) / 1024 for b, v in attach.items()}
    rows["p50"] = {b: med([r[0] for r in v]) for b, v in attach.items()}
    rows["floor"] = med([r[0] for r in floor])
    rows["floor_quick"] = med([r[0] for r in quick])
    rows["attach_failures"] = fails
    # 8. Read before write: round trips with and without --no-verify (Mercury's own count of
    # prompt waits and exec calls, in the JSON result).
    rt = {}
    for b, path in bins.items():
        counts = []
        for i, extra in enumerate([[], ["--no-verify"]]):
            vlan = "130" if i == 0 else "131"
            out = run([path, "--config", cfg, "--format", "json", "attach-port", "--device", "leaf",
                       "--port", "Gi1/0/6", "--vlan", vlan, "--reason", "bench"] + extra)[4]
            try:
                counts.append(json.loads(out)["round_trips"])
            except (ValueError, KeyError):
                counts.append(None)
            # Back to where it started (not measured), so the next binary's attach is the same.
            run([path, "--config", cfg, "--format", "json", "detach-port", "--device", "leaf",
                 "--port", "Gi1/0/6", "--vlan", vlan, "--reason", "bench"])
        rt[b] = counts
    rows["round_trips"] = rt
    # 9. Read before write per platform family over sshd (issue 14): an attach with read
    # before write on one port and one with --no-verify on another, interleaved, each port
    # detached again after (not measured); p50 wall and the round trips the result reports.
    fam = {b: {} for b in bins}
    for name, dev, p1, p2 in env.get("families", []):
        res = {b: {"rbw": [], "plain": []} for b in bins}
        for i in range(max(runs // 2, 5)):
            vlan = "120" if i % 2 == 0 else "121"
            # Interleaved: every binary's pair of attaches in each round.
            for b, path in bins.items():
                for kind, port, extra in (("rbw", p1, []), ("plain", p2, ["--no-verify"])):
                    r = run([path, "--config", cfg, "--format", "json", "attach-port", "--device",
                             dev, "--port", port, "--vlan", vlan, "--reason", "bench"] + extra)
                    try:
                        trips = json.loads(r[4])["round_trips"] if r[3] == 0 else None
                    except (ValueError, KeyError):
                        trips = None
                    res[b][kind].append((r[0], trips, r[3]))
                # Both ports back to where they started (not measured): every measured attach
                # starts from a port that carries no VLAN of the request, as Ironic's do.
                for port in (p1, p2):
                    run([path, "--config", cfg, "--format", "json", "detach-port", "--device", dev,
                         "--port", port, "--vlan", vlan, "--reason", "bench"])

        def summary(xs):
            ok = [x for x in xs if x[2] == 0]
            return {"p50": med([x[0] for x in ok]), "trips": med([x[1] for x in ok]) if ok else None,
                    "fails": len(xs) - len(ok)}
        for b in bins:
            fam[b][name] = {k: summary(v) for k, v in res[b].items()}
    rows["families"] = fam
    json.dump(rows, sys.stdout)


if __name__ == "__main__":
    main()
