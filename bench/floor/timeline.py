#!/usr/bin/env python3
"""Where an attach's wall time goes, next to the libssh2 floor's: phases taken from the
packets on the loopback (tcpdump) and the process's own start and end, interleaved runs,
medians. Nothing is attached to the measured process (no strace, no logging), so the
phases are the ones it has when it is not watched.

  timeline.py --config CFG --port PORT --key KEY --floor SSH_FLOOR [--quickack-floor]
              --runs N NAME=MERCURY...

For each run the child takes the wall-clock time just before it execs (the process's
start), the parent the time at which wait4 returns (its end); tcpdump (started once for all
runs, `-tt`, the same clock) gives every packet of the run's TCP connection. The phases are
marked by the server's USERAUTH_SUCCESS and by the client's own data packets after it
(channel open, then the exec request or the PTY and shell requests and the first line):

  start -> SYN                   process start, config, plan, lock, audit, OpenSSL bound
  SYN -> authenticated          TCP, key exchange, host key, authentication (the server's
                                 USERAUTH_SUCCESS)
  authenticated -> channel open  the client's work before it opens the channel
  channel confirmation wait      channel open -> the client's next packet
  floor: exec -> last packet     the exec request, the command, its output and close
  mercury: PTY + shell -> first line   PTY and shell requests until the login prompt is
                                 seen (the client's next data packet is the first line)
  mercury: lines                 first line -> the last client data packet (disconnect)
  last packet -> end             teardown: the server's close, audit record, exit

Prints a markdown table (ms, medians over the runs) on stdout. Run by bench/floor/run.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"^(\d+\.\d+) IP 127\.0\.0\.1\.(\d+) > 127\.0\.0\.1\.(\d+): Flags \[([^\]]*)\].*length (\d+)")


def spawn(argv):
    """(start, end, exit status) in wall-clock seconds; stdout and stderr discarded."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        fd = os.open(os.devnull, os.O_RDWR)
        os.dup2(fd, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.write(w, repr(time.time()).encode())
        os.close(w)
        os.execv(argv[0], argv)
    os.close(w)
    _, status, _ = os.wait4(pid, 0)
    end = time.time()
    start = float(os.read(r, 64).decode())
    os.close(r)
    return start, end, os.waitstatus_to_exitcode(status)


def packets(pcap, port):
    """{client port: [(time, from_client, flags, length)]} of every connection to `port`."""
    out = subprocess.run(["tcpdump", "-r", pcap, "-tt", "-n", f"tcp port {port}"],
                         capture_output=True, text=True, check=True).stdout
    conns = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t, src, dst, flags, length = float(m[1]), int(m[2]), int(m[3]), m[4], int(m[5])
        client = src != port
        cport = src if client else dst
        conns.setdefault(cport, []).append((t, client, flags, length))
    return conns


def phases(kind, start, end, pkts):
    """The run's phases in ms, or None when its packets do not have the expected shape."""
    syn = next((p[0] for p in pkts if p[1] and "S" in p[2]), None)
    # USERAUTH_SUCCESS is the server's only 28-byte packet up to there (one byte of payload,
    # chacha20-poly1305 as negotiated on the bench; the same for both programs).
    ok = next((p[0] for p in pkts if not p[1] and p[3] == 28), None)
    if syn is None or ok is None:
        return None
    data = [p[0] for p in pkts if p[1] and p[3] > 0 and p[0] > ok]
    if len(data) < (3 if kind == "mercury" else 2):
        return None
    ms = lambda a, b: (b - a) * 1000.0
    ph = {"start -> SYN": ms(start, syn), "SYN -> authenticated": ms(syn, ok),
          "authenticated -> channel open sent": ms(ok, data[0]),
          "channel confirmation wait": ms(data[0], data[1])}
    if kind == "mercury":
        ph["PTY + shell -> login prompt"] = ms(data[1], data[3])
        ph["session lines"] = ms(data[3], data[-1])
    else:
        ph["exec + output + close"] = ms(data[1], data[-1])
    ph["last packet -> exit"] = ms(data[-1], end)
    ph["total"] = ms(start, end)
    return ph


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--quickack-floor", action="store_true",
                    help="also the floor with quick ACKs (ssh-floor --quickack)")
    ap.add_argument("bins", nargs="+", help="NAME=PATH of a mercury binary")
    a = ap.parse_args()
    bins = dict(b.split("=", 1) for b in a.bins)
    floors = [("floor", [])] + ([("floor --quickack", ["--quickack"])] if a.quickack_floor else [])
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "lo.pcap")
        dump = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-U", "-s", "128", "-w", pcap,
                                 f"tcp port {a.port}"], stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        runs = []  # (column, kind, start, end, code)
        flip = 0
        for _ in range(a.runs):
            for name, path in bins.items():
                flip ^= 1
                vlan = "120" if flip else "121"
                s, e, c = spawn([path, "--config", a.config, "--format", "json", "attach-port",
                                 "--device", "leaf", "--port", "Gi1/0/5", "--vlan", vlan,
                                 "--reason", "bench"])
                runs.append((name, "mercury", s, e, c))
                time.sleep(0.05)
            for name, extra in floors:
                s, e, c = spawn([a.floor] + extra + ["127.0.0.1", str(a.port), "root", a.key, "true"])
                runs.append((name, "floor", s, e, c))
                time.sleep(0.05)
        time.sleep(0.5)
        dump.terminate()
        dump.wait()
        conns = packets(pcap, a.port)
    # A run's connection is the one whose SYN falls inside the run.
    by_syn = sorted((next((p[0] for p in ps if p[1] and "S" in p[2]), 0.0), ps)
                    for ps in conns.values())
    cols = {}
    bad = {}
    for name, kind, s, e, c in runs:
        mine = [ps for t, ps in by_syn if s <= t <= e]
        ph = phases(kind, s, e, mine[0]) if c == 0 and len(mine) == 1 else None
        if ph is None:
            why = f"exit {c}" if c else f"{len(mine)} connections" if len(mine) != 1 else "packets"
            bad.setdefault(name, []).append(why)
            continue
        cols.setdefault(name, []).append(ph)
    names = list(bins) + [f for f, _ in floors]
    rows = []
    for col in names:
        for ph in cols.get(col, []):
            for k in ph:
                if k not in rows:
                    rows.append(k)
    print("| phase | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for k in rows:
        cells = []
        for col in names:
            xs = [ph[k] for ph in cols.get(col, []) if k in ph]
            cells.append(f"{statistics.median(xs):.1f}" if xs else "—")
        print(f"| {k} | " + " | ".join(cells) + " |")
    print()
    print(f"runs: {a.runs} interleaved; medians in ms per phase (the phases' medians need not "
          f"add up to the total's); unusable runs: {bad or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
