"""The instance: gcl_init / gcl_run / gcl_finalize, and running a Python program on every local
simulated IPU.

run() calls gcl_run from a helper thread, so that the main thread stays in Python and Ctrl-C
works: after the first Ctrl-C, every IPU's next call into gcl raises KeyboardInterrupt (its
program fails, so libgcl aborts the collectives the others wait in), and run() raises it in the
caller once every program has returned. A second Ctrl-C exits the process at once (status 130),
for programs busy in Python code that never calls gcl again.

A program's uncaught exception fails that IPU's program with a status (the GclError's own, or
GCL_ERR_INTERNAL for any other exception), which makes libgcl abort its peers instead of letting
them wait, and run() re-raises the first exception raised, with a note naming the IPU. An
exception that did not come from libgcl is also recorded as the IPU's reason
(gcl_ctx_set_error), so that the errors of its peers in other instances quote it
("... failed: ValueError: bad shard").
"""

import atexit
import collections
import contextlib
import ctypes
import os
import signal
import sys
import threading

from . import _context, errors
from ._lib import PROGRAM, Config, ElasticInfo, JobInfo, lib, text

_C = lib
_INTERNAL = -12  # GCL_ERR_INTERNAL: a Python exception that is not a GclError

JobInfoTuple = collections.namedtuple(
    "JobInfo", "num_instances instance_index num_replicas num_local_replicas replica_offset "
    "ipus_per_replica num_hosts host_index")
JobInfoTuple.__doc__ = "The shape of the job as this instance sees it (gcl_job_info_t)."

_open = set()  # instances not finalized yet: finalized at exit if the program forgot


class _Run:
    """The state of one run(): results, and exceptions in the order raised."""

    def __init__(self, instance, program, args, kwargs):
        self.instance, self.program, self.args, self.kwargs = instance, program, args, kwargs
        self.results = [None] * instance.info.num_local_replicas * instance.info.ipus_per_replica
        self.raised = []  # (exception, ctx) in the order raised
        self.kept = []  # requests left open by a program: their buffers outlive gcl_run
        self.interrupted = False
        self.lock = threading.Lock()

    def keep(self, requests):
        with self.lock:
            self.kept.extend(requests)

    def entry(self, handle, _arg):
        """The gcl_program_t of every IPU thread. Never lets an exception escape into ctypes."""
        ctx = None
        try:
            ctx = _context.Ctx(self.instance, handle, self)
            try:
                value = self.program(ctx, *self.args, **self.kwargs)
            finally:
                ctx._end()
            if isinstance(value, int) and not isinstance(value, bool) and value < 0:
                return value  # a gcl status: the program failed with it
            self.results[ctx.global_ipu - self.instance._first_ipu] = value
            return 0
        except BaseException as e:  # noqa: B902: every exception fails this IPU, nothing else
            with self.lock:
                self.raised.append((e, ctx))
            status = _INTERNAL
            if isinstance(e, errors.GclError) and isinstance(e.status, int) and e.status < 0:
                status = e.status
            if not getattr(e, "from_libgcl", False):
                # The program's own exception: its peers, in every instance, quote it.
                why = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                if _C.gcl_ctx_set_error(handle, status, b"%s", why.encode(errors="replace")):
                    _C.gcl_ctx_set_error(handle, _INTERNAL, b"%s", why.encode(errors="replace"))
            return status

    def interrupt(self):
        """Makes every IPU's next libgcl call through this package raise KeyboardInterrupt."""
        self.interrupted = True


class Instance:
    """This process's instance of the job (gcl_instance_t), from gcl.init(). Use it as a context
    manager, or call finalize() (collective over all instances) when done."""

    def __init__(self, replicas=None, ipus_per_replica=None):
        cfg = Config(_positive(replicas, "replicas"),
                     _positive(ipus_per_replica, "ipus_per_replica"))
        cfg.size = ctypes.sizeof(Config)
        cfg.version = _C.gcl_version()
        h = ctypes.c_void_p()
        status = _C.gcl_init(ctypes.byref(cfg), ctypes.byref(h))
        # gcl_init frees what it made on failure; gcl_init_error() keeps its one-line reason.
        errors.check(status, lambda: "gcl_init failed: " +
                     (_C.gcl_init_error() or b"(no reason given)").decode(errors="replace"))
        self._h = h
        self._running = False
        self._memory = {}
        info = JobInfo()
        _C.gcl_instance_info(h, ctypes.byref(info))
        self.info = JobInfoTuple(*(getattr(info, f) for f, _ in JobInfo._fields_))
        self._first_ipu = self.info.replica_offset * self.info.ipus_per_replica
        _open.add(self)

    def __repr__(self):
        i = self.info
        return (f"<gcl.Instance {i.instance_index} of {i.num_instances}: replicas "
                f"{i.replica_offset}..{i.replica_offset + i.num_local_replicas - 1} of "
                f"{i.num_replicas}>")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """Finalizes the instance. Left by an exception (a Ctrl-C's KeyboardInterrupt, say, which
        the instances may see at different runs), a failed closing barrier does not replace it:
        libgcl has logged why, and the exception that ended the block is the one to report."""
        if exc_type is None:
            self.finalize()
            return False
        try:
            self.finalize()
        except errors.GclError:
            pass
        return False

    def _handle(self):
        if self._h is None:
            raise RuntimeError("this gcl instance has been finalized")
        return self._h

    def _ipu_memory(self, global_ipu):
        return self._memory.setdefault(global_ipu, {})

    @property
    def topology(self):
        """The simulated pod's name ("POD16", or its file's name)."""
        return text(_C.gcl_sim_topology(self._handle()))

    @property
    def topology_ipus(self):
        """The number of IPUs of the simulated pod."""
        return _C.gcl_sim_topology_ipus(self._handle())

    @property
    def error(self):
        """libgcl's text of the last failure of run() on this instance ("" when none)."""
        return text(_C.gcl_instance_error(self._handle()))

    def run(self, program, *args, **kwargs):
        """Runs PROGRAM(ctx, *ARGS, **KWARGS) on one thread per local simulated IPU and waits
        for all of them. Returns their return values, by local IPU order. A program fails by
        raising (run() re-raises the first exception raised) or by returning a negative gcl
        status. Every instance calls run() the same number of times."""
        h = self._handle()
        if self._running:
            raise RuntimeError("run() is already running on this instance")
        state = _Run(self, program, args, kwargs)
        callback = PROGRAM(state.entry)
        out, done = {}, threading.Event()

        def drive():
            try:
                out["status"] = _C.gcl_run(h, callback, None)
            finally:
                done.set()

        self._running = True
        try:
            with _ctrl_c(state):  # before the programs start: a Ctrl-C they see is handled
                threading.Thread(target=drive, name="gcl.run", daemon=True).start()
                while not done.wait(0.25):
                    pass
        finally:
            self._running = False
        state.kept = None  # gcl_run has cancelled what the programs left open
        if state.interrupted:
            raise KeyboardInterrupt
        if state.raised:
            exc, ctx = state.raised[0]
            if ctx is not None and hasattr(exc, "add_note"):
                exc.add_note(f"(raised by the program on replica {ctx.replica} IPU {ctx.ipu})")
            raise exc
        errors.check(out.get("status", _INTERNAL), lambda: text(_C.gcl_instance_error(h)))
        return state.results

    @property
    def elastic(self):
        """True when this instance is of an elastic job (poprun --elastic)."""
        return bool(_C.gcl_elastic_enabled(self._handle()))

    def elastic_info(self):
        """The membership of an elastic job (gcl_elastic_info): a dict of epoch, num_instances,
        instance_index, num_replicas, replica_offset, num_local_replicas, initial_instances,
        initial_replicas, min_replicas, slot, joined, lost (the instances lost at the last
        change, by slot) and joined_slots. NotSupportedError without --elastic."""
        e = ElasticInfo()
        errors.check(_C.gcl_elastic_info(self._handle(), ctypes.byref(e)),
                     lambda: "gcl_elastic_info: not an elastic job (poprun --elastic)")
        return _elastic_dict(e)

    def resize(self):
        """After a run() that failed because an instance was lost (PeerFailedError,
        AbortedError), agrees the next membership with the other instances and rebuilds this one for it
        (gcl_elastic_resize), then run() again. Returns elastic_info(); self.info and the popdist
        answers follow the new membership. Raises PeerFailedError when the job cannot go on
        (fewer than --min-replicas left; the text says which instances were lost)."""
        h = self._handle()
        if self._running:
            raise RuntimeError("resize() while run() is running")
        e = ElasticInfo()
        errors.check(_C.gcl_elastic_resize(h, ctypes.byref(e)),
                     lambda: text(_C.gcl_instance_error(h)))
        info = JobInfo()
        _C.gcl_instance_info(h, ctypes.byref(info))
        self.info = JobInfoTuple(*(getattr(info, f) for f, _ in JobInfo._fields_))
        self._first_ipu = self.info.replica_offset * self.info.ipus_per_replica
        self._memory.clear()
        return _elastic_dict(e)

    def finalize(self):
        """Ends the instance (collective over all instances). Arrays from ipu_malloc are freed
        here. Calling it again does nothing."""
        if self._h is None:
            return
        if self._running:
            raise RuntimeError("finalize() while run() is running")
        h, self._h = self._h, None
        self._memory.clear()
        _open.discard(self)
        errors.check(_C.gcl_finalize(h), lambda: "the instances' closing barrier failed")


def _elastic_dict(e):
    d = {f: getattr(e, f) for f, _ in ElasticInfo._fields_[:-2]}
    d["joined"] = bool(d["joined"])
    d["lost"] = list(e.lost[:min(e.num_lost, 64)])
    d["joined_slots"] = list(e.joined_slots[:min(e.num_joined, 64)])
    return d


@contextlib.contextmanager
def _ctrl_c(state):
    """While run() waits, Ctrl-C interrupts the run: the first stops every IPU's program, a
    second exits at once with status 130. A SIGINT handler of its own does it, not an except
    KeyboardInterrupt: Python raises that between any two bytecodes, and one that landed outside
    the try (under load: in the wait loop's own test) escaped as an uncaught interrupt, exit -2.
    Installed before the programs start, so that a Ctrl-C after their first line is never
    missed. Left alone when the program has a SIGINT handler of its own, or when run() is not
    called from the main thread (Python delivers signals there only). The wait is on an Event,
    not Thread.join: in Python 3.11 a join interrupted by Ctrl-C marks the thread as finished."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def on_sigint(signum, frame):
        if state.interrupted:
            _exit_now()
        state.interrupt()  # marked first: a second Ctrl-C during the line below exits at once
        print("gcl: interrupted; stopping every IPU's program (Ctrl-C again to exit now)",
              file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _exit_now():
    """The second Ctrl-C: exit at once, with the shell's status of an interrupt."""
    try:
        print("gcl: interrupted again; exiting now", file=sys.stderr, flush=True)
    finally:
        os._exit(130)


def _positive(v, what):
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{what} must be a positive integer, not {v!r}")
    return v


def init(replicas=None, ipus_per_replica=None):
    """Starts this instance: REPLICAS replicas of IPUS_PER_REPLICA simulated IPUs (default 1
    and 1) when run alone; under poprun the POPDIST_* variables win over both. Returns an
    Instance (a context manager that finalizes it)."""
    return Instance(replicas, ipus_per_replica)


@atexit.register
def _finalize_forgotten():
    for inst in list(_open):
        try:
            inst.finalize()
        except Exception as e:  # noqa: B902: at exit, report and go on
            print(f"gcl: finalize at exit: {e}", file=sys.stderr)
