#!/usr/bin/env python3
"""scripts/bench-collectives --peers LIST: libgcl's all_reduce beside its CPU peers, in one run.

Every peer runs as its users run it: its own program and its own launcher, in a job of its own,
with the same number of ranks on the same hosts as ours; one after the other, each with the same
timing rule (examples/bench/rule.h: 5 warm-up calls, batches sized to ~20 ms, the median of 5,
doubled while their spread is above 5%):

  gcl      poprun --num-replicas N --num-instances N gcl-bench all_reduce (poprun's mpirun is
           OpenMPI's, by its explicit path)
  mpi      /usr/bin/mpirun.openmpi -np N mpi-peer-openmpi (OpenMPI's defaults: bound to a core
           at 2 ranks; --oversubscribe only when the ranks exceed the cores, as it requires; on
           one host a session directory of its own, as poprun gives its jobs: OpenMPI 4.1 fails
           a job that starts while another one's clean-up removes the shared one,
           open-mpi/ompi#8510)
  mpich    /usr/bin/mpiexec.mpich -n N mpi-peer-mpich (Hydra's defaults)
  gloo     N processes of gloo-peer with Gloo's FileStore rendezvous, tcp over loopback, once with
           allreduce_ring_chunked and once with allreduce_bcube

Writes DIR/results.csv (every row of every job, with the load average at its start),
DIR/summary.md (ratio tables: ours against the best peer and each peer, per rank count; the
latency table; the namespace hosts), DIR/all_reduce-peers-N.png per rank count and
DIR/raw/* (each job's log and CSV).
"""
import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OPENMPI_RUN = "/usr/bin/mpirun.openmpi"
MPICH_RUN = "/usr/bin/mpiexec.mpich"
COLUMNS = ["impl", "algo", "collective", "mode", "ranks", "hosts", "size_bytes", "iters",
           "repeats", "time_us", "spread", "busbw_gbs", "p99_us", "wrong"]
EXTRA = ["pass", "layout", "load1", "job_seconds", "job_runs"]
PEERS = {"mpi": [("openmpi", None)], "mpich": [("mpich", None)],
         "gloo": [("gloo", "ring_chunked"), ("gloo", "bcube")]}


def die(msg, code=2):
    print("bench-collectives: " + msg, file=sys.stderr)
    sys.exit(code)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench-collectives --peers", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peers", required=True, help="mpi,mpich,gloo (any of them)")
    p.add_argument("--out", default="out/bench-peers")
    p.add_argument("--ranks", default="2,4,8", help="rank counts on this host (default 2,4,8)")
    p.add_argument("-b", "--minbytes", default="4K")
    p.add_argument("-e", "--maxbytes", default="256M")
    p.add_argument("-f", "--stepfactor", default="4")
    p.add_argument("-w", "--warmup", default="5", help="warm-up calls (default 5)")
    p.add_argument("--samples", default="1000", help="latency: timed calls per size")
    p.add_argument("--latency-warmup", default="100", help="latency: warm-up calls")
    p.add_argument("--no-bandwidth", action="store_true", help="skip the 4 KiB-256 MiB sweep")
    p.add_argument("--no-latency", action="store_true", help="skip the latency runs")
    p.add_argument("--loaded", action="store_true",
                   help="a second pass with a CPU hog beside every job")
    p.add_argument("--netns", default="",
                   help="namespace-host layouts HxP (hosts x ranks per host), e.g. 2x1,2x2,4x1:"
                        " ours and OpenMPI across real TCP (root)")
    p.add_argument("--wire", action="store_true",
                   help="with --netns: bytes on the wire per payload byte at 16 MiB, and the "
                        "veth link's bandwidth from a plain socket pair")
    p.add_argument("--quick", action="store_true",
                   help="a short run: 4 KiB-1 MiB, 2 ranks, 200 latency samples")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per job (default 1800)")
    p.add_argument("--job-repeats", type=int, default=3,
                   help="runs of every job whose ranks fit the cores, and of ours and "
                        "OpenMPI's latency jobs where they do not, alternating with the other "
                        "runtimes' (default 3); each row is the run of median time")
    a = p.parse_args(argv)
    a.peer_list = [x for x in a.peers.split(",") if x]
    for x in a.peer_list:
        if x not in PEERS:
            die("--peers '%s': expected a list of mpi, mpich, gloo" % x)
    try:
        a.rank_list = [int(x) for x in a.ranks.split(",") if x]
    except ValueError:
        die("--ranks '%s': expected rank counts like 2,4,8" % a.ranks)
    if not a.rank_list or min(a.rank_list) < 2 or max(a.rank_list) > 64:
        die("--ranks '%s': expected rank counts from 2 to 64" % a.ranks)
    a.layouts = []
    for l in [x for x in a.netns.split(",") if x]:
        try:
            h, per = (int(v) for v in l.split("x"))
        except ValueError:
            die("--netns '%s': expected layouts like 2x1,2x2,4x1" % a.netns)
        if not (2 <= h <= 8 and 1 <= per <= 8):
            die("--netns '%s': 2 to 8 hosts of 1 to 8 ranks each" % l)
        a.layouts.append((h, per))
    if not 1 <= a.job_repeats <= 20:
        die("--job-repeats %d: expected 1 to 20" % a.job_repeats)
    if a.wire and not a.layouts:
        die("--wire needs --netns")
    if a.quick:
        a.maxbytes, a.samples = "1M", "200"
        a.rank_list = a.rank_list[:1] if a.ranks == "2,4,8" else a.rank_list
    return a


class Runner:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(os.environ.get("GCL_BUILD_DIR", os.path.join(ROOT, "build")))
        self.bin = os.path.join(self.build, "bin")
        self.out = os.path.abspath(a.out)
        self.raw = os.path.join(self.out, "raw")
        self.rows = []
        self.failures = []
        self.cores = os.cpu_count() or 1
        os.makedirs(self.raw, exist_ok=True)
        for f in os.listdir(self.raw):
            os.unlink(os.path.join(self.raw, f))
        self.env = dict(os.environ)
        self.env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                         "POPRUN_MPIRUN": OPENMPI_RUN})
        self.hog = None
        self.rep, self.reps, self.slow_ok = 0, 1, True
        self.mpi_tmp = tempfile.mkdtemp(prefix="gcl-bench-mpi.", dir="/dev/shm")

    def need(self, *names):
        for n in names:
            path = n if os.path.isabs(n) else os.path.join(self.bin, n)
            if not os.access(path, os.X_OK):
                die("%s is missing (build with the peers: cmake --build %s; scripts/setup "
                    "installs their packages)" % (path, self.build), 1)

    # ---- one job ----
    def run(self, name, argv, layout, procs=None, env=None):
        """Runs ARGV (or, for Gloo, the process list PROCS) as one job; its CSV rows go in."""
        if self.reps > 1:
            name += "-run%d" % (self.rep + 1)
        csv_path = os.path.join(self.raw, name + ".csv")
        log_path = os.path.join(self.raw, name + ".log")
        load1 = open("/proc/loadavg").read().split()[0]
        t0 = time.time()
        with open(log_path, "w") as log:
            log.write("# load average %s; %s\n" % (load1, " ".join(argv or procs[0][0])))
            log.flush()
            ok = self._gloo(procs, csv_path, log) if procs else \
                self._one(argv + ["--csv", csv_path], log, env)
        secs = time.time() - t0
        got = 0
        if os.path.exists(csv_path):
            for rec in csv.reader(open(csv_path)):
                if len(rec) != len(COLUMNS):
                    continue
                row = dict(zip(COLUMNS, rec))
                row.update({"pass": self.pass_name, "layout": layout, "load1": load1,
                            "job_seconds": "%.1f" % secs})
                self.rows.append(row)
                got += 1
        status = "ok" if ok else "FAILED (see %s)" % log_path
        if not ok:
            self.failures.append(name)
        print("  %-44s %6.1f s  load %-5s %2d rows  %s" % (name, secs, load1, got, status),
              flush=True)

    def _one(self, argv, log, env):
        try:
            p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env or self.env,
                                 start_new_session=True)
            return p.wait(timeout=self.a.timeout) == 0
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            log.write("bench-collectives: timed out after %d s\n" % self.a.timeout)
            return False

    def _gloo(self, procs, csv_path, log):
        """Gloo's own rendezvous: a FileStore directory, RANK/SIZE/PREFIX for each process."""
        store = tempfile.mkdtemp(prefix="gloo-store.", dir="/tmp")
        ps = []
        try:
            for argv, env in procs:
                env = dict(self.env, GLOO_STORE=store, **env)
                ps.append(subprocess.Popen(argv + ["--csv", csv_path], stdout=log,
                                           stderr=subprocess.STDOUT, env=env,
                                           start_new_session=True))
            # The first rank to fail ends the job (the others would wait for it until Gloo's
            # own timeout); the ranks are polled, as they have no common parent to wait on.
            deadline = time.time() + self.a.timeout
            while True:
                codes = [p.poll() for p in ps]
                if any(c not in (None, 0) for c in codes):
                    return False
                if all(c == 0 for c in codes):
                    return True
                if time.time() > deadline:
                    log.write("bench-collectives: timed out after %d s\n" % self.a.timeout)
                    return False
                time.sleep(0.02)
        finally:
            for p in ps:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
            shutil.rmtree(store, ignore_errors=True)

    # ---- the commands ----
    def timing(self, latency):
        if latency:
            return ["--latency", "--samples", self.a.samples, "-w", self.a.latency_warmup]
        return ["-b", self.a.minbytes, "-e", self.a.maxbytes, "-f", self.a.stepfactor,
                "-n", "auto", "--repeats", "5", "-w", self.a.warmup]

    def ours(self, coll, n, latency, where=()):
        return [os.path.join(self.bin, "poprun"), *where, "--num-replicas", str(n),
                "--num-instances", str(n), os.path.join(self.bin, "gcl-bench"), coll,
                *self.timing(latency)]

    def openmpi(self, coll, n, latency, hosts=None):
        argv = [OPENMPI_RUN, "-np", str(n)]
        if hosts:
            # Unbound, as poprun runs its mpirun: the namespace hosts share this machine's
            # cores, and each host's daemon would bind its first rank to core 0, so two ranks
            # that poll would share one core and wait a scheduler tick for each other at every
            # call (4,000 us for an 8 B all_reduce across 2 hosts x 1, against 11 us unbound).
            argv += ["-H", hosts, "--bind-to", "none"]
        else:
            argv += ["--mca", "orte_tmpdir_base", self.mpi_tmp]
        if not hosts and n > self.cores:
            argv.append("--oversubscribe")  # OpenMPI refuses to run more ranks than cores else
        return argv + [os.path.join(self.bin, "mpi-peer-openmpi"), coll, *self.timing(latency)]

    def mpich(self, coll, n, latency):
        return [MPICH_RUN, "-n", str(n), os.path.join(self.bin, "mpi-peer-mpich"), coll,
                *self.timing(latency)]

    def gloo(self, coll, n, latency, algo, prefix):
        argv = [os.path.join(self.bin, "gloo-peer"), coll, *self.timing(latency)]
        if algo and coll == "all_reduce":
            argv += ["-a", algo]
        return [(argv, {"RANK": str(r), "SIZE": str(n), "PREFIX": prefix}) for r in range(n)]

    def one_host(self, n, latency):
        colls = ["all_reduce", "broadcast", "barrier"] if latency else ["all_reduce"]
        mode = "lat" if latency else "bw"
        for coll in colls:
            tag = "%s-%s-%d-%s" % (self.pass_name, mode, n, coll)
            self.run("gcl-" + tag, self.ours(coll, n, latency), "1x%d" % n)
            for peer in self.a.peer_list:
                for impl, algo in PEERS[peer]:
                    if impl == "openmpi":
                        self.run("openmpi-" + tag, self.openmpi(coll, n, latency), "1x%d" % n)
                    elif not self.slow_ok or (impl == "gloo" and coll == "barrier"):
                        continue  # Gloo's peer times no barrier
                    elif impl == "mpich":
                        self.run("mpich-" + tag, self.mpich(coll, n, latency), "1x%d" % n)
                    elif coll == "all_reduce" or algo == "ring_chunked":
                        name = "gloo-%s-%s" % (algo if coll == "all_reduce" else "bcast", tag)
                        self.run(name, None, "1x%d" % n,
                                 procs=self.gloo(coll, n, latency, algo, name))

    def netns(self, h, per, latency):
        """Ours and OpenMPI over H namespace hosts of PER ranks, each in a cluster of its own."""
        n = h * per
        cluster = [os.path.join(ROOT, "scripts", "netns-cluster"), str(h), "--"]
        hosts = ",".join("h%d" % k for k in range(1, h + 1))
        slots = ",".join("h%d:%d" % (k, per) for k in range(1, h + 1))
        colls = ["all_reduce", "broadcast"] if latency else ["all_reduce"]
        mode = "lat" if latency else "bw"
        for coll in colls:
            tag = "%s-%s-h%dx%d-%s" % (self.pass_name, mode, h, per, coll)
            layout = "%dx%d" % (h, per)
            self.run("gcl-" + tag, cluster + self.ours(coll, n, latency, ("-H", hosts)), layout)
            self.run("openmpi-" + tag, cluster + self.openmpi(coll, n, latency, slots), layout)

    def start_hog(self):
        # One busy loop: a core's worth of someone else's work beside the job.
        self.hog = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)

    def stop_hog(self):
        if self.hog:
            os.killpg(self.hog.pid, signal.SIGKILL)
            self.hog.wait()
            self.hog = None

    def sweep(self):
        a = self.a
        passes = ["quiet"] + (["loaded"] if a.loaded else [])
        for self.pass_name in passes:
            print("bench-collectives: %s pass%s" % (
                self.pass_name, " (a CPU hog beside every job)" if self.pass_name == "loaded"
                else ""), flush=True)
            if self.pass_name == "loaded":
                self.start_hog()
            try:
                for n in a.rank_list:
                    for mode in [m for m in (False, True) if not self.skip(m)]:
                        self.repeated(n <= self.cores, self.one_host, n, mode,
                                      fast_only=mode)
                for h, per in a.layouts:
                    for mode in [m for m in (False, True) if not self.skip(m)]:
                        if mode and (h, per) != (2, 1):
                            continue
                        self.repeated(h * per <= self.cores, self.netns, h, per, mode)
            finally:
                self.stop_hog()

    def skip(self, latency):
        return self.a.no_latency if latency else self.a.no_bandwidth

    def repeated(self, fits, fn, *args, fast_only=False):
        """FN(*ARGS), run --job-repeats times when the ranks fit the cores: a run's every job
        (ours, then each peer) one after the other, then the next run. The machine's state
        drifts between jobs (on this VM, a 2-rank call's latency moves between two levels
        about 2x apart from one job to the next), so one job per runtime would compare luck.
        FAST_ONLY (latency where the ranks outnumber the cores): ours and OpenMPI's jobs are
        repeated (a second or two each; one of ours once took 4x its usual time), MPICH's and
        Gloo's run once (minutes each: they poll without yielding the core)."""
        self.reps = self.a.job_repeats if fits or fast_only else 1
        for self.rep in range(self.reps):
            self.slow_ok = fits or self.rep == 0
            fn(*args)
        self.rep, self.reps, self.slow_ok = 0, 1, True

    def collapse(self):
        """One row per runtime, layout and size: the run whose time is the median of its runs
        (the lower middle of an even count); job_runs says how many runs there were."""
        groups = {}
        for r in self.rows:
            key = tuple(r[k] for k in ("pass", "layout", "impl", "algo", "collective", "mode",
                                       "ranks", "hosts", "size_bytes"))
            groups.setdefault(key, []).append(r)
        rows = []
        for g in groups.values():
            g.sort(key=lambda r: float(r["time_us"]) if r["time_us"] else float("inf"))
            keep = dict(g[(len(g) - 1) // 2])
            keep["job_runs"] = str(len(g))
            rows.append(keep)
        self.rows = rows

    def write_csv(self):
        with open(os.path.join(self.out, "results.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS + EXTRA)
            w.writeheader()
            for r in self.rows:
                w.writerow(r)


def main(argv):
    a = parse_args(argv)
    r = Runner(a)
    try:
        return run_all(a, r, argv)
    finally:
        shutil.rmtree(r.mpi_tmp, ignore_errors=True)


def run_all(a, r, argv):
    need = ["poprun", "gcl-bench"]
    for peer in a.peer_list:
        need += {"mpi": ["mpi-peer-openmpi", OPENMPI_RUN], "mpich": ["mpi-peer-mpich", MPICH_RUN],
                 "gloo": ["gloo-peer"]}[peer]
    r.need(*need)
    if a.layouts and os.geteuid() != 0:
        die("--netns needs root (network namespaces)", 1)
    started = time.time()
    print("bench-collectives: peers %s; ranks %s on %d cores%s; results in %s" % (
        ",".join(a.peer_list), ",".join(map(str, a.rank_list)), r.cores,
        "; namespace hosts " + a.netns if a.layouts else "", r.out), flush=True)
    r.sweep()
    r.collapse()
    if a.wire:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_wire
        bench_wire.run_all(r, a.layouts)
    r.write_csv()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_peers_report
    bench_peers_report.report(r.out, r.rows, r.cores, getattr(r, "wire", None),
                              " ".join(["scripts/bench-collectives"] + argv))
    print(open(os.path.join(r.out, "summary.md")).read())
    print("bench-collectives: done in %d s; results in %s" % (time.time() - started, r.out))
    if r.failures:
        print("bench-collectives: %d job(s) failed: %s" % (len(r.failures), ", ".join(r.failures)),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
