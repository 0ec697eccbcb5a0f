"""scripts/chaos --elastic: random faults during an elastic training run (poprun --elastic), which
must never restart and never go below --min-replicas.

    scripts/chaos --elastic --faults 20 --seed S [--hosts 4] [--min-replicas 8]

Runs `train` (its default MLP, 16 replicas, one instance per namespace host) twice: once
undisturbed and once under `poprun --elastic --min-replicas M --max-restarts F` with F faults
drawn from the seed, one at a time: a kill (SIGKILL of an instance's program), a stall (SIGSTOP
for 5 to 8 s, longer than the store's 4 s beat timeout, then SIGCONT) or a partition (a host's
link down for 5 to 8 s). After each, the survivors go on from memory and a replacement of the lost
instance joins back at a step boundary; the next fault comes 1 to 3 s after the job is whole
again. It passes when the faulted run exits 0, no line says the job restarted or stopped, no
membership had fewer than M replicas, every fault was injected and recovered from, the final test
accuracy is within 0.5 points of the undisturbed run's, and nothing of the job is left (no
process of it, nothing of it in /dev/shm). It writes report.json and report.md with each
fault's time to recover: from the fault to the first step the survivors finished after it.
"""

import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

import chaos_inject as inj

KINDS = ("kill", "stall", "partition")
RE_EPOCH = re.compile(r"^poprun: elastic: epoch (\d+): (\d+) instances?, (\d+) replicas(.*)$")
RE_FIRST = re.compile(r"train: first step of this run \(step (\d+)\) finished at unix time "
                      r"([0-9.]+)")
RE_ACC = re.compile(r"train: test accuracy ([0-9.]+) ")
RE_BAD = re.compile(r"restarting the job|the elastic job stopped|cannot go on")
# A stalled or partitioned instance that wakes after the others left it out says it cannot go
# on: that is the fault's expected end, not the job's.
RE_LEFT_OUT = re.compile(r"cannot go on: this instance was left out of the job")


class Run:
    """A poprun job whose output lines are kept with the time each came."""

    def __init__(self, cmd, env, path):
        self.lines = []
        self.lock = threading.Lock()
        self.log = open(path, "w")
        self.p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace")
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            now = time.time()
            with self.lock:
                self.lines.append((now, line.rstrip("\n")))
            self.log.write(f"{now:.3f} {line}")
            self.log.flush()

    def since(self, t0):
        with self.lock:
            return [(t, l) for t, l in self.lines if t >= t0]

    def wait(self, timeout):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.send_signal(signal.SIGTERM)
            rc = self.p.wait()
        self.t.join(5)
        self.log.close()
        return rc


def programs(mark):
    """The newest live train process of each instance slot: {slot: Proc}."""
    out = {}
    for pid, (comm, env) in inj.marked(mark).items():
        slot = env.get("POPDIST_INSTANCE_INDEX")
        if comm == "train" and slot is not None and slot.isdigit():
            if int(slot) not in out or pid > out[int(slot)].pid:
                out[int(slot)] = inj.Proc(pid)
    return out


def wait_for(run, t0, pred, timeout):
    """The first (time, line) since T0 for which PRED holds, within TIMEOUT s; None otherwise."""
    end = time.time() + timeout
    while time.time() < end and run.p.poll() is None:
        for t, line in run.since(t0):
            if pred(line):
                return t, line
        time.sleep(0.05)
    for t, line in run.since(t0):
        if pred(line):
            return t, line
    return None


def inject(kind, slot, rng, cfg):
    """Injects KIND on instance SLOT (on host h{SLOT+1}); returns what was done."""
    host = slot + 1
    if kind == "kill":
        p = programs(cfg["mark"]).get(slot)
        if not p or not p.signal(signal.SIGKILL):
            return None
        return f"instance {slot}'s program (pid {p.pid}) killed with SIGKILL"
    d = round(rng.uniform(5.0, 8.0), 1)
    if kind == "stall":
        p = programs(cfg["mark"]).get(slot)
        if not p or not p.signal(signal.SIGSTOP):
            return None
        threading.Timer(d, lambda: p.signal(signal.SIGCONT)).start()
        return f"instance {slot}'s program (pid {p.pid}) stopped for {d} s"
    inj.link(cfg["cluster_id"], host, up=False)
    threading.Timer(d, lambda: inj.link(cfg["cluster_id"], host, up=True)).start()
    return f"link of host h{host} down for {d} s"


def one_fault(run, i, rng, cfg, members):
    """Fault I: injected on a member, then the shrink, its first step, and the job whole again."""
    kind = rng.choice(cfg["kinds"])
    slot = rng.choice(sorted(members))
    t0 = time.time()
    what = inject(kind, slot, rng, cfg)
    rec = {"fault": i + 1, "kind": kind, "instance": slot, "what": what, "t": round(t0, 3)}
    if not what:
        rec["error"] = "could not inject (the instance was not there)"
        return rec
    shrink = wait_for(run, t0, lambda l: bool(RE_EPOCH.match(l)) and "lost" in l, 60)
    if not shrink:
        rec["error"] = "no membership without the instance within 60 s"
        return rec
    first = wait_for(run, shrink[0], lambda l: bool(RE_FIRST.search(l)), 60)
    if not first:
        rec["error"] = "no step after the shrink within 60 s"
        return rec
    rec["detected_s"] = round(shrink[0] - t0, 3)
    rec["recover_s"] = round(float(RE_FIRST.search(first[1]).group(2)) - t0, 3)
    rec["shrink"] = shrink[1]
    whole = wait_for(run, shrink[0], lambda l: bool(RE_EPOCH.match(l)) and
                     int(RE_EPOCH.match(l).group(2)) == cfg["hosts"], 120)
    if not whole:
        rec["error"] = "the replacement did not join within 120 s"
        return rec
    rec["whole_s"] = round(whole[0] - t0, 3)
    return rec


def accuracy(run):
    for _, line in reversed(run.since(0)):
        m = RE_ACC.search(line)
        if m:
            return float(m.group(1))
    return None


def job_cmd(cfg, elastic):
    b = cfg["build"]
    hosts = ",".join(f"h{k + 1}" for k in range(cfg["hosts"]))
    cmd = [os.path.join(b, "bin", "poprun"), "-H", hosts, "--num-instances", str(cfg["hosts"]),
           "--num-replicas", "16", "-x", f"CHAOS_MARK={cfg['mark']}"]
    if elastic:
        cmd += ["--elastic", "--min-replicas", str(cfg["min_replicas"]), "--max-restarts",
                str(cfg["faults"] + 5)]
    return cmd + [os.path.join(b, "bin", "train"), "--seed", str(cfg["seed"]), "--progress",
                  "plain", "--max-steps", str(cfg["steps"])]


def check(rep, run, rc, cfg):
    reasons = []
    if rc != 0:
        reasons.append(f"the faulted run exited {rc}")
    bad = [l for _, l in run.since(0) if RE_BAD.search(l) and not RE_LEFT_OUT.search(l)]
    if bad:
        reasons.append(f"it restarted or stopped: {bad[0]}")
    for _, l in run.since(0):
        m = RE_EPOCH.match(l)
        if m and int(m.group(3)) < cfg["min_replicas"]:
            reasons.append(f"below --min-replicas {cfg['min_replicas']}: {l}")
    failed = [f for f in rep["faults"] if "error" in f]
    if failed or len(rep["faults"]) < cfg["faults"]:
        reasons.append(f"{len(rep['faults']) - len(failed)} of {cfg['faults']} faults "
                       f"recovered from" + (f"; fault {failed[0]['fault']}: {failed[0]['error']}"
                                            if failed else ""))
    a0, a1 = rep["accuracy_undisturbed"], rep["accuracy_faulted"]
    if a0 is None or a1 is None or abs(a0 - a1) > 0.005:
        reasons.append(f"test accuracy {a1} against {a0} undisturbed: not within 0.5 points")
    return reasons


def leftovers(cfg):
    left = []
    for _ in range(100):
        procs = inj.marked(cfg["mark"])
        if not procs:
            break
        time.sleep(0.1)
    left += [f"process {p} ({c})" for p, (c, _) in procs.items()]
    left += [f"/dev/shm/{n}" for n in os.listdir("/dev/shm") if cfg["job_name"] in n]
    return left


def write_report(rep, out):
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(rep, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(f"# Elastic chaos run: {rep['result']}\n\n{rep['summary']}\n\n"
                "| fault | kind | instance | what | detected (s) | first step (s) | whole again "
                "(s) |\n|---|---|---|---|---|---|---|\n")
        for r in rep["faults"]:
            f.write(f"| {r['fault']} | {r['kind']} | {r['instance']} | {r.get('what') or ''} | "
                    f"{r.get('detected_s', '')} | {r.get('recover_s', '')} | "
                    f"{r.get('whole_s', r.get('error', ''))} |\n")
        for reason in rep["reasons"]:
            f.write(f"\n- {reason}")


def inside(a, out):
    cfg = {"hosts": a.hosts, "faults": a.faults, "seed": a.seed, "min_replicas": a.min_replicas,
           "kinds": [k for k in a.kinds.split(",") if k in KINDS] or list(KINDS),
           "steps": a.steps, "build": os.path.abspath(os.environ.get(
               "GCL_BUILD_DIR", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "build"))),
           "cluster_id": os.environ["NETNS_CLUSTER_ID"], "mark": f"elastic-chaos-{os.getpid()}",
           "job_name": f"echaos{os.getpid()}"}
    env = dict(os.environ, POPRUN_JOB_NAME=cfg["job_name"], CHAOS_MARK=cfg["mark"])
    rng = random.Random(a.seed)
    clean = Run(job_cmd(cfg, False), env, os.path.join(out, "undisturbed.log"))
    rc0 = clean.wait(a.timeout)
    faulted = Run(job_cmd(cfg, True), env, os.path.join(out, "faulted.log"))
    first = wait_for(faulted, 0, lambda l: "train: global batch" in l, 120)
    faults, members = [], set(range(a.hosts))
    if first:
        time.sleep(2)
        for i in range(a.faults):
            if faulted.p.poll() is not None:
                break
            rec = one_fault(faulted, i, rng, cfg, members)
            faults.append(rec)
            print(f"chaos --elastic: fault {rec['fault']} ({rec['kind']}): {rec.get('what')}; "
                  + (rec["error"] if "error" in rec else
                     f"first step {rec['recover_s']} s after, whole again {rec['whole_s']} s "
                     f"after"), flush=True)
            if "error" in rec:
                break
            time.sleep(rng.uniform(1.0, 3.0))
    rc = faulted.wait(a.timeout)
    rep = {"config": {k: v for k, v in cfg.items() if k != "build"}, "faults": faults,
           "undisturbed_status": rc0, "faulted_status": rc,
           "accuracy_undisturbed": accuracy(clean), "accuracy_faulted": accuracy(faulted)}
    rec_s = [f["recover_s"] for f in faults if "recover_s" in f]
    rep["reasons"] = check(rep, faulted, rc, cfg)
    left = leftovers(cfg)
    if left:
        rep["reasons"].append("left behind: " + "; ".join(left))
    rep["result"] = "fail" if rep["reasons"] else "pass"
    rep["summary"] = (
        f"{len(rec_s)} faults recovered from ({', '.join(sorted({f['kind'] for f in faults}))});"
        f" time to the first step after a fault p50 "
        f"{statistics.median(rec_s) if rec_s else 0:.3f} s, max {max(rec_s or [0]):.3f} s; test "
        f"accuracy {rep['accuracy_faulted']} against {rep['accuracy_undisturbed']} undisturbed")
    write_report(rep, out)
    print(f"chaos --elastic: {'PASSED' if not rep['reasons'] else 'FAILED'}: {rep['summary']}"
          + ("" if not rep["reasons"] else "; " + "; ".join(rep["reasons"])), flush=True)
    return 0 if not rep["reasons"] else 1


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="scripts/chaos --elastic", description=__doc__)
    ap.add_argument("--elastic", action="store_true")
    ap.add_argument("--faults", type=int, required=True, help="faults to inject (1-100)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--hosts", type=int, default=4, help="namespace hosts (3-8; default 4)")
    ap.add_argument("--min-replicas", type=int, default=8)
    ap.add_argument("--kinds", default=",".join(KINDS), help="kill,stall,partition")
    ap.add_argument("--steps", type=int, default=3510, help="train's --max-steps (default 3510)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "out", "chaos-elastic"))
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--_inside", action="store_true", help=argparse.SUPPRESS)
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    bad = [k for k in a.kinds.split(",") if k not in KINDS]
    if not 1 <= a.faults <= 100 or not 3 <= a.hosts <= 8 or bad or \
            not 1 <= a.min_replicas <= 16 * (a.hosts - 1) // a.hosts:
        print(f"chaos --elastic: --faults 1-100, --hosts 3-8, --kinds of {','.join(KINDS)}, and "
              f"--min-replicas at most the replicas of all hosts but one "
              f"({16 * (a.hosts - 1) // a.hosts}) are accepted", file=sys.stderr)
        return 2
    if 16 % a.hosts:
        print(f"chaos --elastic: --hosts {a.hosts} must divide the 16 replicas", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("chaos --elastic: needs root (network namespaces)", file=sys.stderr)
        return 77
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    if a._inside:
        return inside(a, out)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/
    cmd = [os.path.join(here, "netns-cluster"), str(a.hosts), "--", sys.executable,
           os.path.join(here, "chaos"), "--_elastic_inside"] + argv
    return subprocess.run(cmd).returncode
