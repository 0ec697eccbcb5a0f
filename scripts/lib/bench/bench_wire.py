#!/usr/bin/env python3
"""bench-collectives --peers ... --netns LAYOUTS --wire: where the time goes across hosts.

For each namespace-host layout, ours and OpenMPI each run a 16 MiB all_reduce twice, with
WARMUP + FEW and WARMUP + MANY calls, and the bytes every host's eth0 sent are read before and
after each job (`ip -s link`, the kernel's own counters). The difference of the two jobs,
over MANY - FEW calls, is what one call sends, with the start-up and the warm-up taken out.
TCP's retransmissions are taken out too (each namespace's own RetransSegs, /proc/net/snmp, each
retransmitted segment counted as one full segment of payload, MTU - 52 bytes): between
namespace hosts segments arrive out of order and are sent again, 0.5-5% of the bytes in one
job and not the same in the next, which moved the difference of two jobs by several percent
(OpenMPI's 2 x 1 read 0.988 to 1.074 bytes a payload byte where the algorithm must send
exactly 1). What they add is reported beside, as a share of the bytes sent.
Beside it:
  - the algorithm's bound: an all_reduce of S bytes over H hosts must send at least
    2 (H - 1) / H x S from each host (reduce-scatter and all-gather between hosts, each host's
    ranks reduced in its memory first), whatever the ranks per host;
  - the veth link's bandwidth, from a plain TCP socket pair between two namespace hosts (one
    way, and each way with both directions at once, as an all_reduce uses it);
  - the time the bytes a call sends would take at that link rate.

Run by scripts/lib/bench/bench_peers.py (run_all); `bench_wire.py --inside ...` is the part that runs in
the cluster's head namespace (scripts/netns-cluster), and prints one JSON line per result.
"""
import json
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIZE = 16 << 20
WARMUP, FEW, MANY = 2, 4, 12
LINK_BYTES = 512 << 20
PORT = 47311


def retrans_segs(ns):
    """TCP segments namespace NS has sent again so far (its own /proc/net/snmp)."""
    snmp = subprocess.check_output(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                                   text=True).splitlines()
    tcp = [l.split()[1:] for l in snmp if l.startswith("Tcp:")]
    return int(dict(zip(tcp[0], tcp[1]))["RetransSegs"])


def tx_bytes(cluster, hosts):
    """(bytes sent, bytes of them retransmitted) of each host's eth0 so far."""
    out = []
    for k in range(1, hosts + 1):
        ns = "%s-h%d" % (cluster, k)
        j = json.loads(subprocess.check_output(
            ["ip", "-n", ns, "-j", "-s", "link", "show", "dev", "eth0"]))
        mss = int(j[0]["mtu"]) - 52  # IPv4 and TCP headers with timestamps
        out.append((int(j[0]["stats64"]["tx"]["bytes"]), retrans_segs(ns) * mss))
    return out


def job(argv, csv_path, env):
    """Runs one job; returns its time per call (us) from its CSV."""
    with open(csv_path + ".log", "w") as log:
        rc = subprocess.call(argv + ["--csv", csv_path], stdout=log, stderr=subprocess.STDOUT,
                             env=env, timeout=900)
    if rc != 0:
        raise RuntimeError("%s exited %d (log: %s.log)" % (argv[0], rc, csv_path))
    rows = [l.split(",") for l in open(csv_path) if l.strip()]
    return float(rows[-1][9])


def inside(binpath, mpirun, raw, hosts, per):
    cluster = os.environ["NETNS_CLUSTER_ID"]
    n = hosts * per
    names = ",".join("h%d" % k for k in range(1, hosts + 1))
    slots = ",".join("h%d:%d" % (k, per) for k in range(1, hosts + 1))
    timing = ["-b", str(SIZE), "-e", str(SIZE), "--repeats", "1", "-w", str(WARMUP)]
    cmds = {
        "gcl": [os.path.join(binpath, "poprun"), "-H", names, "--num-replicas", str(n),
                "--num-instances", str(n), os.path.join(binpath, "gcl-bench"), "all_reduce"],
        "openmpi": [mpirun, "-np", str(n), "-H", slots, "--bind-to", "none",
                    os.path.join(binpath, "mpi-peer-openmpi"), "all_reduce"],
    }
    env = dict(os.environ)
    for impl, argv in cmds.items():
        sent, again, t = {}, {}, 0.0
        for calls in (FEW, MANY):
            before = tx_bytes(cluster, hosts)
            path = os.path.join(raw, "wire-%s-h%dx%d-n%d.csv" % (impl, hosts, per, calls))
            t = job(argv + timing + ["-n", str(calls)], path, env)
            after = tx_bytes(cluster, hosts)
            sent[calls] = sum(a[0] - b[0] for a, b in zip(after, before))
            again[calls] = sum(a[1] - b[1] for a, b in zip(after, before))
        first = (sent[MANY] - again[MANY]) - (sent[FEW] - again[FEW])
        print(json.dumps({"layout": "%dx%d" % (hosts, per), "impl": impl, "time_us": t,
                          "host_bytes": first / (MANY - FEW) / hosts,
                          "retrans_share": (again[FEW] + again[MANY]) /
                          max(1, sent[FEW] + sent[MANY])}), flush=True)


# ---- the link: a plain TCP socket pair ----
SERVER = """
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); buf = bytearray(1 << 20); got = 0; t0 = None
while True:
    k = c.recv_into(buf)
    if not k: break
    if t0 is None: t0 = time.monotonic()
    got += k
print(got, time.monotonic() - t0, flush=True)
"""
CLIENT = """
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
buf = bytes(1 << 20)
for _ in range(int(sys.argv[3]) >> 20): c.sendall(buf)
c.close()
"""


def in_ns(cluster, k, code, *args):
    return ["ip", "netns", "exec", "%s-h%d" % (cluster, k), sys.executable, "-c", code, *args]


def link(both):
    """GB/s of one TCP stream from h1 to h2 (and h2 to h1 at once when BOTH)."""
    cluster = os.environ["NETNS_CLUSTER_ID"]
    pairs = [(1, 2), (2, 1)] if both else [(1, 2)]
    servers = []
    for i, (src, dst) in enumerate(pairs):
        p = subprocess.Popen(in_ns(cluster, dst, SERVER, str(PORT + i)), stdout=subprocess.PIPE,
                             text=True)
        p.stdout.readline()  # listening
        servers.append(p)
    clients = [subprocess.Popen(in_ns(cluster, src, CLIENT, "h%d" % dst, str(PORT + i),
                                      str(LINK_BYTES))) for i, (src, dst) in enumerate(pairs)]
    for c in clients:
        c.wait(timeout=300)
    rates = []
    for p in servers:
        got, secs = p.stdout.readline().split()
        p.wait(timeout=60)
        rates.append(int(got) / float(secs) / 1e9)
    return min(rates)


def run_all(r, layouts):
    """Fills r.wire for the report: the link, and every layout's bytes per call."""
    netns = os.path.join(ROOT, "scripts", "netns-cluster")
    me = os.path.abspath(__file__)
    rows = []
    wire = {"rows": rows}
    out = subprocess.run([netns, "2", "--", sys.executable, me, "--link"], env=r.env,
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        print("bench-collectives: --wire: the link measurement failed: %s" %
              out.stderr.strip().splitlines()[-1:], file=sys.stderr)
        r.failures.append("wire-link")
        return
    wire.update(json.loads(out.stdout.strip().splitlines()[-1]))
    for hosts, per in layouts:
        out = subprocess.run([netns, str(hosts), "--", sys.executable, me, "--inside", r.bin,
                              "/usr/bin/mpirun.openmpi", r.raw, str(hosts), str(per)],
                             env=r.env, capture_output=True, text=True, timeout=3600)
        got = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
        if out.returncode != 0 or len(got) != 2:
            print("bench-collectives: --wire %dx%d failed: %s" % (
                hosts, per, " ".join(out.stderr.strip().splitlines()[-2:])), file=sys.stderr)
            r.failures.append("wire-%dx%d" % (hosts, per))
            continue
        for g in got:
            g["per_byte"] = g["host_bytes"] / SIZE
            g["bound"] = 2.0 * (hosts - 1) / hosts
            g["rate"] = g["host_bytes"] / (g["time_us"] * 1e3)
            g["link_time_us"] = g["host_bytes"] / (wire["link_both"] * 1e3)
            rows.append(g)
            print("  wire %-5s %-8s %8.0f us a call, %.3f bytes a payload byte a host "
                  "(bound %.3f), %.2f GB/s a host, %.1f%% of the bytes retransmitted" % (
                      g["layout"], g["impl"], g["time_us"], g["per_byte"], g["bound"],
                      g["rate"], 100 * g["retrans_share"]), flush=True)
    r.wire = wire


def main(argv):
    if argv[:1] == ["--link"]:
        print(json.dumps({"link_one_way": link(False), "link_both": link(True)}), flush=True)
        return 0
    if argv[:1] == ["--inside"] and len(argv) == 6:
        inside(argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]))
        return 0
    print("usage: bench_wire.py --link | --inside BIN MPIRUN RAWDIR HOSTS PER_HOST "
          "(run by bench-collectives --wire)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
