"""The plan of a chaos run (scripts/chaos): which faults, at which steps, with which victims and
parameters, all drawn from the seed, so that a seed names one run's faults exactly.

Faults are injected one at a time. Fault i waits until the training reaches step `at_step`
(strictly increasing from fault to fault, so each lands on steps no earlier fault reached) and
until fault i-1 has recovered. The kinds:

  kill           SIGKILL of one instance's program, or of every instance of one host
  stall          SIGSTOP of one instance for longer than GCL_TIMEOUT_S, then SIGCONT
  partition      one host's link down for 1-10 s inside its namespace, then up
  disk_full      the checkpoint file system filled before a checkpoint is written
  torn           the newest checkpoint truncated or a byte flipped as the job is killed
  recovery_kill  a kill, then a second kill while the job restarts from the first
  torn_all       (only when asked for) every checkpoint torn as the job is killed: the run
                 cannot recover, which shows the line that says so
"""

import random

KINDS = ("kill", "stall", "partition", "disk_full", "torn", "recovery_kill")
EXTRA_KINDS = ("torn_all",)
# With 5 faults, these cover every kind: torn and recovery_kill each include a kill.
FIVE_COVER = ("stall", "partition", "disk_full", "torn", "recovery_kill")


def _victim(rng, hosts, per_host):
    """A kill's victims: one instance, or every instance of one host (half the time each)."""
    if rng.random() < 0.5:
        inst = rng.randrange(hosts * per_host)
        return {"what": "instance", "instances": [inst], "host": inst // per_host + 1}
    h = rng.randrange(hosts)
    return {"what": "host", "instances": list(range(h * per_host, (h + 1) * per_host)),
            "host": h + 1}


def _params(rng, kind, cfg):
    hosts, per_host = cfg["hosts"], cfg["instances_per_host"]
    p = {}
    if kind in ("kill", "torn", "torn_all", "recovery_kill"):
        p["victim"] = _victim(rng, hosts, per_host)
    if kind == "recovery_kill":
        p["second_victim"] = _victim(rng, hosts, per_host)
        p["second_delay_s"] = round(rng.uniform(0.0, 0.5), 3)
    if kind == "stall":
        inst = rng.randrange(hosts * per_host)
        p["victim"] = {"what": "instance", "instances": [inst], "host": inst // per_host + 1}
        p["stall_s"] = round(cfg["gcl_timeout_s"] + rng.uniform(1.0, 3.0), 2)
    if kind == "partition":
        p["host"] = rng.randrange(hosts) + 1
        p["down_s"] = round(rng.uniform(1.0, 10.0), 2)
    if kind == "disk_full":
        # Bytes left free: less than a checkpoint, so that its write starts and fails partway.
        p["free_bytes"] = rng.randrange(0, cfg["ckpt_bytes"] // 2)
    if kind in ("torn", "torn_all"):
        if rng.random() < 0.5:
            p["tear"] = {"how": "truncate", "fraction": round(rng.random(), 6)}
        else:
            p["tear"] = {"how": "flip", "fraction": round(rng.random(), 6),
                         "xor": rng.randrange(1, 256)}
    return p


def _kinds(rng, n, allowed):
    """N kinds: every allowed kind once first (when N allows, or the five that cover all six),
    in a random order, then random draws."""
    if set(allowed) == set(KINDS) and n == 5:
        first = list(FIVE_COVER)
    else:
        first = list(allowed) if n >= len(allowed) else []
    rng.shuffle(first)
    rest = [rng.choice(allowed) for _ in range(n - len(first))]
    return first + rest


def make_plan(cfg):
    """The faults of CFG (faults, seed, kinds, checkpoint_every, hosts, instances_per_host,
    gcl_timeout_s, ckpt_bytes) and the training length that holds them."""
    rng = random.Random(cfg["seed"])
    c = cfg["checkpoint_every"]
    faults = []
    step = 0
    for i, kind in enumerate(_kinds(rng, cfg["faults"], cfg["kinds"])):
        # The first fault after two checkpoints; later ones 3 to 2C steps after the previous.
        step += rng.randint(2 * c + 1, 3 * c) if i == 0 else rng.randint(3, 2 * c)
        faults.append({"index": i + 1, "kind": kind, "at_step": step,
                       **_params(rng, kind, cfg)})
    # Room after the last fault, and for the drift of the waits: a torn fault waits for a
    # checkpoint whose predecessor is whole, a disk-full one for the checkpoint it spoils and
    # the next, written (up to 2C steps each past its at_step); any fault redoes up to C.
    waits = sum(1 for f in faults if f["kind"] in ("torn", "torn_all", "disk_full"))
    # And room for output that comes late. A fault goes in when the harness reads the step's
    # progress line; beside other jobs, OpenMPI's forwarding has held that output back for 7 s
    # (191 lines in one read: a fault planned at step 25 went in at 231). Later faults catch up
    # only by the few steps their gaps leave, so 50 faults ran out of steps at the 39th. And the
    # faster the training, the more steps each late line and each recovery costs: over the tcp
    # transport (about 56 steps a second between namespace hosts, 30 over libfabric) the faults
    # took 30 steps each against the plan's 11, and a partition that the job first survived
    # took 375, so 50 faults ran out of steps at the 21st with half the planned steps more.
    # Four times the planned steps (at least 10C) more: steps cost little.
    total = step + 4 * c + 2 * c * waits + max(10 * c, 4 * step)
    return {"faults": faults, "total_steps": total}
