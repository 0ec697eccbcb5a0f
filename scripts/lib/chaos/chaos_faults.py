"""The faults of scripts/chaos, each a generator that the event loop (chaos_loop) drives: it
injects the fault when the training reaches its step, and returns once the job has recovered,
with a record of when, what, how it was noticed, the restarts, the steps redone and the time to
the first new step. The plan (chaos_plan) says which faults, where and with what."""

import os
import re
import signal

import chaos_inject as inj
from chaos_loop import (FAILURE_RE, NOT_WRITTEN_RE, RESTART_RE, SKIPPED_RE, Wait)

# Longest a fault may take to recover before the run is declared unrecoverable: a partition of
# 10 s, GCL_TIMEOUT_S, poprun's 10 s for a mpirun that cannot reach a host, and a restart, with
# room for a loaded machine.
RECOVER_S = 240.0


class Unrecoverable(Exception):
    pass


def is_line(ev):
    return ev is not None and ev[0] == "line"


class Chaos:
    """What the driver knows of the job (updated from every line by on_line) and the faults."""

    def __init__(self, cfg, loop_factory):
        self.cfg = cfg
        self.loop = None
        self.loop_factory = loop_factory
        self.ckdir = cfg["ckpt_dir"]
        self.run = 0          # POPDIST_RESTART_COUNT of the run now going
        self.step = 0         # the newest step line
        self.max_step = 0     # the largest step seen in any run
        self.run_max = {}     # run -> the largest step it printed
        self.resumed = {}     # run -> the step it resumed from
        self.restart_lines = []
        self.unplanned = []
        self.active = None    # the fault being injected or recovered from
        self.records = []
        self.valid = set()    # checkpoint steps known to be whole
        self.failures = []    # failure lines since the active fault began
        self.stopped = []     # processes SIGSTOPped by the chaos, to SIGCONT in any case
        self.links_down = set()
        self.filler = None

    # ---- bookkeeping of the job's lines and of the checkpoint directory ----------------------
    def on_event(self, ev):
        if ev[0] == "line":
            self.on_line(ev)
        elif ev[0] == "fs":
            self.note_fs(ev)

    def on_line(self, ev):
        _, t, text = ev
        m = re.match(r"^\[instance 0\] epoch \d+/\d+ (?:done: )?step (\d+)/", text)
        if m:
            s = int(m.group(1))
            self.step = s
            self.max_step = max(self.max_step, s)
            self.run_max[self.run] = max(self.run_max.get(self.run, 0), s)
            return
        m = RESTART_RE.match(text)
        if m:
            self.run = int(m.group(2))
            self.restart_lines.append((t, text))
            if self.active is None:
                self.unplanned.append({"t_s": round(t, 3), "poprun": m.group(1)})
            else:
                self.failures.append((t, text))
            return
        m = re.match(r"^\[instance 0\] train: resuming from \S+ \(step (\d+)", text)
        if m:
            self.resumed[self.run] = int(m.group(1))
        elif re.match(r"^\[instance 0\] train: no valid checkpoint in ", text):
            self.resumed[self.run] = 0
        if self.active is not None and (FAILURE_RE.search(text) or SKIPPED_RE.search(text) or
                                        NOT_WRITTEN_RE.search(text)):
            self.failures.append((t, text))

    # ---- waits -------------------------------------------------------------------------------
    def wait_lines(self, pred, timeout_s):
        """Waits for a line of the job that PRED accepts; returns it, or None at the deadline."""
        ev = yield Wait(lambda e: is_line(e) and pred(e[2]), timeout_s)
        return ev

    def sleep(self, seconds):
        yield Wait(lambda e: False, seconds)

    def step_line(self, text):
        return re.match(r"^\[instance 0\] epoch \d+/\d+ (?:done: )?step (\d+)/", text)

    def wait_step(self, at_step, ok=lambda s: True):
        """Waits for a step line at or past AT_STEP, in new ground, that OK accepts."""
        while True:
            if self.step >= at_step and self.step >= self.max_step and ok(self.step):
                return self.step
            ev = yield from self.wait_lines(lambda t: self.step_line(t), RECOVER_S)
            if ev is None:
                raise Unrecoverable(f"no step of training for {RECOVER_S:.0f} s "
                                    f"(last step {self.step})")

    def wait_recovered(self, rec, run_before, t0, allow_no_restart=False, settle=None,
                       first_run=None):
        """Waits until training goes on after the fault: the first step line of a run after
        RUN_BEFORE (a restart), or, with ALLOW_NO_RESTART, a step past the one at the fault once
        SETTLE() says the fault is over, and no restart in the GCL_TIMEOUT_S + 2 s after it (a
        job that fails late is recovered by its restart). Fills REC; restarts are counted from
        FIRST_RUN (default RUN_BEFORE)."""
        deadline = self.loop.now() + RECOVER_S
        first = None
        while first is None:
            left = deadline - self.loop.now()
            if left <= 0:
                raise Unrecoverable(f"fault {rec['index']} ({rec['kind']}): training did not go "
                                    f"on within {RECOVER_S:.0f} s")
            ev = yield from self.wait_lines(lambda t: self.step_line(t), min(left, 1.0))
            if ev is None:
                continue
            if self.run > run_before:
                first = ev
            elif allow_no_restart and (settle is None or settle()) and \
                    self.step > rec["step_at_fault"] + 1:
                first, at = ev, self.step
                grace = self.cfg["gcl_timeout_s"] + 2.0
                late = yield from self.wait_lines(lambda t: RESTART_RE.match(t), grace)
                if late is not None:
                    first = None
                    continue
                rec["first_new_step"] = at
        rec.setdefault("first_new_step", self.step)
        rec["first_new_step_s"] = round(first[1] - t0, 3)
        rec["restarts"] = self.run - (run_before if first_run is None else first_run)
        if rec["restarts"]:
            before = max(v for r, v in self.run_max.items() if r < self.run)
            rec["resumed_from"] = self.resumed.get(self.run)
            rec["max_step_before"] = before
            rec["steps_redone"] = before - (rec["resumed_from"] or 0)
        else:
            rec["steps_redone"] = 0
        rec["poprun"] = [x for tt, x in self.restart_lines if tt >= t0]

    # ---- helpers -----------------------------------------------------------------------------
    def programs(self, run=None):
        return inj.instance_programs(self.cfg["mark"], "train", self.run if run is None else run)

    def stop_program(self, f, instance):
        """SIGSTOPs the program of INSTANCE in the current run. Between a step line and the
        lookup the job may have begun a restart (an earlier fault's second kill landing late):
        then the next step line names the run whose program is stopped."""
        deadline = self.loop.now() + RECOVER_S
        while True:
            pid = self.programs().get(instance)
            proc = inj.Proc(pid) if pid else None
            if proc and proc.signal(signal.SIGSTOP):
                return proc
            if self.loop.now() >= deadline:
                raise Unrecoverable(f"fault {f['index']}: instance {instance} not found in "
                                    f"{RECOVER_S:.0f} s")
            yield from self.wait_lines(lambda t: self.step_line(t), 1.0)

    def kill(self, instances, run=None):
        progs = self.programs(run)
        procs = [inj.Proc(progs[i]) for i in instances if i in progs]
        return inj.kill_all(procs), len(instances)

    def begin(self, f, what):
        rec = {"index": f["index"], "kind": f["kind"], "what": what, "planned_step": f["at_step"],
               "step_at_fault": self.step, "t_s": round(self.loop.now(), 3)}
        self.active = rec
        self.failures = []
        return rec

    def noticed(self, rec, t0):
        """How the fault was noticed: the first failure line after it, and when."""
        for t, text in self.failures:
            if t >= t0:
                rec["noticed_by"] = text[:400]
                rec["noticed_after_s"] = round(t - t0, 3)
                return
        rec.setdefault("noticed_by", None)

    def cont_all(self):
        for p in self.stopped:
            p.signal(signal.SIGCONT)
        self.stopped = []

    # ---- the faults --------------------------------------------------------------------------
    def f_kill(self, f):
        v = f["victim"]
        yield from self.wait_step(f["at_step"])
        rec = self.begin(f, f"SIGKILL of {self._who(v)}")
        t0, run0 = self.loop.now(), self.run
        n, want = self.kill(v["instances"])
        rec["signalled"] = f"{n} of {want}"
        yield from self.wait_recovered(rec, run0, t0)
        self.noticed(rec, t0)
        return rec

    def f_stall(self, f):
        v = f["victim"]
        yield from self.wait_step(f["at_step"])
        proc = yield from self.stop_program(f, v["instances"][0])
        rec = self.begin(f, f"SIGSTOP of {self._who(v)} for {f['stall_s']} s (GCL_TIMEOUT_S "
                            f"{self.cfg['gcl_timeout_s']}), then SIGCONT")
        t0, run0 = self.loop.now(), self.run
        self.stopped.append(proc)
        state = {"cont": False}

        def cont():
            state["cont"] = True
            rec["sigcont_reached"] = proc.signal(signal.SIGCONT)
            if proc in self.stopped:
                self.stopped.remove(proc)
        self.loop.later(f["stall_s"], cont)
        yield from self.wait_recovered(rec, run0, t0, allow_no_restart=True,
                                       settle=lambda: state["cont"])
        while not state["cont"]:  # the restart came first: SIGCONT is still due (or not needed)
            yield from self.sleep(0.1)
        self.noticed(rec, t0)
        return rec

    def f_partition(self, f):
        h = f["host"]
        yield from self.wait_step(f["at_step"])
        rec = self.begin(f, f"link of host h{h} down for {f['down_s']} s, then up")
        t0, run0 = self.loop.now(), self.run
        inj.link(self.cfg["cluster_id"], h, up=False)
        self.links_down.add(h)
        state = {"up": False}

        def up():
            inj.link(self.cfg["cluster_id"], h, up=True)
            self.links_down.discard(h)
            state["up"] = True
            state["t_up"] = self.loop.now()
        self.loop.later(f["down_s"], up)
        yield from self.wait_recovered(rec, run0, t0, allow_no_restart=True,
                                       settle=lambda: state["up"])
        while not state["up"]:
            yield from self.sleep(0.1)
        if rec["restarts"] == 0:
            rec["outcome"] = "survived: no failure, training went on once the link was back"
        self.noticed(rec, t0)
        return rec

    def f_disk_full(self, f):
        c = self.cfg["checkpoint_every"]
        lead = 4 if c >= 5 else 2
        # The line of step s comes before s's own checkpoint is written: fill between two.
        yield from self.wait_step(f["at_step"], ok=lambda s: s % c and c - s % c >= lead)
        target = (self.step // c + 1) * c
        rec = self.begin(f, f"checkpoint file system filled ({f['free_bytes']} bytes left free) "
                            f"before the checkpoint of step {target}")
        t0 = self.loop.now()
        self.filler = os.path.join(self.cfg["ckpt_fs"], "filler")
        rec["free_bytes_left"] = inj.fill(self.filler, f["free_bytes"])
        newest = self.newest_valid()
        ev = yield from self.wait_lines(lambda t: NOT_WRITTEN_RE.search(t) is not None, RECOVER_S)
        if ev is None:
            raise Unrecoverable(f"fault {f['index']}: no checkpoint failed on the full disk")
        failed = int(NOT_WRITTEN_RE.search(ev[2]).group(1))
        rec["noticed_by"] = ev[2][:400]
        rec["noticed_after_s"] = round(ev[1] - t0, 3)
        rec["checkpoint_not_written"] = failed
        # Looked at while the disk is still full: the job goes on, and once the disk is freed
        # it writes its next checkpoint and may prune this one (a harness slowed by load read
        # its lines in a batch, 190 steps late, and found the next one written).
        rec["newest_kept"] = self.newest_valid()
        os.unlink(self.filler)
        self.filler = None
        if rec["newest_kept"] != newest:
            raise Unrecoverable(f"fault {f['index']}: the newest good checkpoint (step {newest}) "
                                f"did not stay after the failed write")
        # Training never stopped: its first new step is the next line; it has recovered once a
        # checkpoint is written again.
        rec["first_new_step_s"] = None
        while True:
            ev = yield Wait(lambda e: e is not None and (is_line(e) or e[0] == "fs"), RECOVER_S)
            if ev is None:
                raise Unrecoverable(f"fault {f['index']}: no checkpoint written after the disk "
                                    f"was freed")
            if is_line(ev) and self.step_line(ev[2]) and rec["first_new_step_s"] is None:
                rec["first_new_step_s"] = round(ev[1] - t0, 3)
                rec["first_new_step"] = self.step
            if ev[0] == "fs" and self._moved_in(ev) and self._moved_in(ev) > failed:
                rec["checkpoint_again"] = self._moved_in(ev)
                rec["checkpoint_again_after_s"] = round(ev[1] - t0, 3)
                break
        rec["restarts"] = 0
        rec["steps_redone"] = 0
        return rec

    def f_torn(self, f, all_of_them=False):
        """At a checkpoint step whose predecessor is whole: once its file is being written, the
        other instances are stopped (so no later step can end), the file lands, the victims are
        killed, the file (or every file) is torn, the others go on and fail, and the job
        restarts from the checkpoint before it."""
        c = self.cfg["checkpoint_every"]
        yield from self.wait_step(f["at_step"])
        while True:
            ev = yield Wait(lambda e: e is not None and e[0] == "fs", RECOVER_S)
            if ev is None:
                raise Unrecoverable(f"fault {f['index']}: no checkpoint was written")
            m = re.match(r"^\.ckpt-(\d{10})\.gclt\.tmp-", ev[3])
            if m and int(m.group(1)) >= f["at_step"] and \
                    (all_of_them or int(m.group(1)) - c in self.valid):
                break
        target = int(m.group(1))
        progs = self.programs()
        others = [inj.Proc(p) for i, p in progs.items() if i != 0]
        inj.kill_all(others, signal.SIGSTOP)
        self.stopped += others
        v = f["victim"]
        rec = self.begin(f, f"{'every checkpoint' if all_of_them else 'the newest checkpoint'} "
                            f"(step {target}) torn as {self._who(v)} is killed")
        t0, run0 = self.loop.now(), self.run
        name = os.path.basename(inj.ckpt_name(self.ckdir, target))
        ev = yield Wait(lambda e: e is not None and e[0] == "fs" and e[3] == name, 30.0)
        if ev is None:
            self.cont_all()
            raise Unrecoverable(f"fault {f['index']}: checkpoint {target} never landed")
        n, want = self.kill(v["instances"])
        rec["signalled"] = f"{n} of {want}"
        newest = inj.checkpoints(self.ckdir)
        if not all_of_them and newest and newest[0] > target:
            # Under load this driver reads the job's lines and the directory's events late, and
            # the job went past TARGET before the stop took hold (seen: up to step 68 for a
            # target of 50, whose file the job had pruned by then). The victims are dead and
            # the others stopped now, so nothing writes: the newest checkpoint is the one torn.
            rec["what"] = rec["what"].replace(f"(step {target})", f"(step {newest[0]})")
            rec["retargeted_from"] = target
            target = newest[0]
        steps = newest if all_of_them else [target]
        rec["tear"] = {s: inj.tear(inj.ckpt_name(self.ckdir, s), f["tear"]) for s in steps}
        for s in steps:
            self.valid.discard(s)
        # What the job can resume from now: the fault may cost every step since (see
        # chaos_report.over_interval).
        rec["newest_whole"] = self.newest_valid() or 0
        self.cont_all()
        rec["step_at_fault"] = self.step
        yield from self.wait_recovered(rec, run0, t0)
        self.noticed(rec, t0)
        skipped = [t for tt, t in self.failures if tt >= t0 and SKIPPED_RE.search(t)]
        rec["refused_by_checksum"] = [SKIPPED_RE.search(t).group(2)[:200] for t in skipped]
        return rec

    def f_recovery_kill(self, f):
        v2 = f["second_victim"]
        yield from self.wait_step(f["at_step"])
        rec = self.begin(f, f"SIGKILL of {self._who(f['victim'])}, then of "
                            f"{self._who(v2)} while the job restarts")
        t0, run0 = self.loop.now(), self.run
        self.kill(f["victim"]["instances"])
        ev = yield from self.wait_lines(lambda t: RESTART_RE.match(t) is not None, RECOVER_S)
        if ev is None:
            raise Unrecoverable(f"fault {f['index']}: the job did not restart after the kill")
        # The new run's programs, as they appear (looked for every 20 ms, for 60 s at most).
        run1 = self.run
        want = set(v2["instances"])
        for _ in range(3000):
            if want <= set(self.programs(run1)) or run1 in self.run_max:
                break
            yield from self.sleep(0.02)
        yield from self.sleep(f["second_delay_s"])
        started = run1 in self.run_max
        n, _ = self.kill(v2["instances"], run1)
        rec["second_kill"] = (f"{n} of {len(want)} signalled "
                              f"{round(self.loop.now() - ev[1], 3)} s after poprun's restart "
                              f"line, " + ("after the restarted job's first step" if started
                                           else "before the restarted job's first step"))
        # Lines of the restarted run may still come from before the second kill: training goes
        # on again in the run after it (when the kill reached anything).
        yield from self.wait_recovered(rec, run1 if n else run0, t0, first_run=run0)
        self.noticed(rec, t0)
        return rec

    def newest_valid(self):
        """The newest checkpoint in the directory that verifies, or None."""
        for s in inj.checkpoints(self.ckdir):
            if inj.ckpt_valid(inj.ckpt_name(self.ckdir, s)):
                return s
        return None

    def _who(self, v):
        ipp = self.cfg["instances_per_host"]
        if v["what"] == "host":
            return f"every instance of host h{v['host']} ({', '.join(map(str, v['instances']))})"
        return f"instance {v['instances'][0]} (host h{v['instances'][0] // ipp + 1})"

    def _moved_in(self, ev):
        m = re.match(r"^ckpt-(\d{10})\.gclt$", ev[3])
        return int(m.group(1)) if m and ev[2] & inj.IN_MOVED_TO else None

    def note_fs(self, ev):
        """Every checkpoint that lands is checked (train's own CRC rule)."""
        s = self._moved_in(ev)
        if s is not None and inj.ckpt_valid(inj.ckpt_name(self.ckdir, s)):
            self.valid.add(s)
