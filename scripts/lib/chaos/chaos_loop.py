"""The event loop of scripts/chaos: one poprun job whose output is read line by line as it comes,
directory events of the checkpoint directory, timers, and one driver (a generator) that waits on
them. Nothing is polled without a bound: every wait has a deadline, and the loop sleeps in
select() until a line, an event, a timer or a deadline comes."""

import heapq
import os
import re
import selectors
import signal
import subprocess
import time

STEP_RE = re.compile(r"^\[instance 0\] epoch \d+/\d+ (?:done: )?step (\d+)/(\d+)")
RESTART_RE = re.compile(r"^poprun: (.*); restarting the job \(restart (\d+) of (\d+)\)$")
RESUMED_RE = re.compile(r"^\[instance 0\] train: resuming from (\S+) \(step (\d+)")
FROM_SCRATCH_RE = re.compile(r"^\[instance 0\] train: no valid checkpoint in ")
NOT_WRITTEN_RE = re.compile(r"train: warning: the checkpoint of step (\d+) was not written")
SKIPPED_RE = re.compile(r"train: warning: skipping corrupt checkpoint (\S+?): (.*)$")
FAILURE_RE = re.compile(r"GCL_ERR_|GCL_TIMEOUT_S|GCL_PEER_TIMEOUT_S|is gone|failed|"
                        r"killed by signal|exited with status|is lost")


class JobEnded(Exception):
    """The job's poprun exited while the driver waited for something else."""

    def __init__(self, rc):
        super().__init__(f"poprun exited with status {rc}")
        self.rc = rc


class Wait:
    """What the driver waits for: an event that PRED (called with each one) accepts, or the
    DEADLINE (monotonic seconds). The driver then gets the event, or None."""

    def __init__(self, pred, timeout_s):
        self.pred = pred
        self.deadline = time.monotonic() + timeout_s


class Loop:
    """Runs CMD (poprun) with ENV, logging every line with its time to LOG, and drives DRIVER,
    a generator of Waits. Events are ("line", t, text), ("fs", t, mask, name) and ("exit", t,
    rc); t is seconds since T0. ON_EVENT sees each event just before the driver does."""

    def __init__(self, cmd, env, log, t0, inotify=None, on_event=None):
        self.t0 = t0
        self.log = log
        self.on_event = on_event
        self.inotify = inotify
        self.timers = []
        self.seq = 0
        self.sel = selectors.DefaultSelector()
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.sel.register(self.p.stdout, selectors.EVENT_READ, "out")
        if inotify:
            self.sel.register(inotify.fd, selectors.EVENT_READ, "fs")
        self.buf = b""
        self.eof = False
        self.rc = None
        self.tail = []

    def now(self):
        return time.monotonic() - self.t0

    def later(self, delay_s, fn):
        """Calls FN after DELAY_S seconds (from within the loop)."""
        self.seq += 1
        heapq.heappush(self.timers, (time.monotonic() + delay_s, self.seq, fn))

    def _lines(self):
        try:
            data = os.read(self.p.stdout.fileno(), 65536)
        except BlockingIOError:
            return []
        if not data:
            self.eof = True
            self.sel.unregister(self.p.stdout)
            data = b"\n" if self.buf else b""
        self.buf += data
        *done, self.buf = self.buf.split(b"\n")
        out = []
        for raw in done:
            text = raw.decode(errors="replace").rstrip("\r")
            t = self.now()
            self.log.write(f"{t:10.3f} {text}\n")
            self.tail = (self.tail + [text])[-40:]
            out.append(("line", t, text))
        return out

    def _events(self, timeout_s):
        out = []
        for key, _ in self.sel.select(max(0.0, timeout_s)):
            if key.data == "out":
                out += self._lines()
            else:
                out += [("fs", self.now(), m, n) for m, n in self.inotify.read()]
        return out

    def run(self, driver):
        """Drives DRIVER to its end; returns poprun's exit status. JobEnded is raised into the
        driver when poprun ends while it waits for anything but the exit."""
        wait = next(driver)
        while True:
            nxt = min([wait.deadline] + [t[0] for t in self.timers[:1]])
            events = self._events(nxt - time.monotonic()) if not self.eof else []
            if self.eof and self.rc is None:
                self.rc = self.p.wait()
                events.append(("exit", self.now(), self.rc))
            elif self.eof:
                time.sleep(max(0.0, min(nxt - time.monotonic(), 0.05)))
            while self.timers and self.timers[0][0] <= time.monotonic():
                heapq.heappop(self.timers)[2]()
            # Each event is noted and then shown to the driver before the next one is noted:
            # noting a whole read first made the driver judge every line of it by the last
            # line's step (a job that wrote 80 steps in 3 reads, each ending on a step a
            # disk-full fault may not start at, ended before the fault: chaos_quick, once
            # beside the CI's load).
            seen = 0
            try:
                for ev in events:
                    seen += 1
                    if self.on_event:
                        self.on_event(ev)
                    if wait.pred(ev):
                        wait = driver.send(ev)
                    elif ev[0] == "exit":
                        wait = driver.throw(JobEnded(ev[2]))
                if time.monotonic() >= wait.deadline:
                    wait = driver.send(None)
            except StopIteration:
                for ev in events[seen:]:
                    if self.on_event:
                        self.on_event(ev)
                break
        if self.rc is None:
            self.rc = self.p.wait()
        return self.rc

    def stop(self):
        """Ends the job (poprun's whole session) if it still runs."""
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.p.wait()
