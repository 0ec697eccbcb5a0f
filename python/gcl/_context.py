"""The IPU context: what a program running on one simulated IPU sees (gcl_ctx_t).

A Ctx is handed to the program by Instance.run, on the IPU's own thread, and is valid until the
program returns: using it (or a communicator made from it) from another thread, or afterwards,
is a RuntimeError rather than a crash.
"""

import collections
import ctypes
import math
import os
import threading

import numpy as np

from . import _buffers, _comm, _types, errors
from ._lib import SimStats, lib, text

_C = lib

SimStatsTuple = collections.namedtuple(
    "SimStats", "total_s compute_s exchange_s sync_s idle_s memory_used memory_peak "
    "memory_capacity host_wait_s")
SimStatsTuple.__doc__ = """This IPU's simulated clock and its shares (seconds), and its
simulated SRAM (bytes): gcl_sim_stats_t."""


def _phantom():
    """Whether this instance runs in phantom mode: libgcl's GCL_SIM_PHANTOM, or poprun's
    --offline-mode (POPDIST_OFFLINE_MODE), as gcl_init reads them."""
    return os.environ.get("GCL_SIM_PHANTOM") == "1" or \
        os.environ.get("POPDIST_OFFLINE_MODE") == "1"


def _nonneg_int(v, what, limit=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise ValueError(f"{what} must be a non-negative integer, not {v!r}")
    if limit is not None and v >= limit:
        raise ValueError(f"{what} must be below {limit}, not {v}")
    return int(v)


class Ctx:
    """One simulated IPU's context. replica: its global replica index; ipu: its position in
    the replica; global_ipu: replica * ipus_per_replica + ipu; num_replicas: in the whole job;
    instance: the Instance running it."""

    def __init__(self, instance, handle, run):
        self._h, self._run, self.instance = handle, run, instance
        self._thread = threading.get_ident()
        self._alive = True
        self._pending = set()
        self.replica = _C.gcl_ctx_replica(handle)
        self.ipu = _C.gcl_ctx_ipu(handle)
        self.global_ipu = _C.gcl_ctx_global_ipu(handle)
        self.num_replicas = _C.gcl_ctx_num_replicas(handle)

    def __repr__(self):
        return f"<gcl.Ctx replica {self.replica} IPU {self.ipu}>"

    def _enter(self):
        """Checked before every libgcl call made through this context."""
        if not self._alive:
            raise RuntimeError("this IPU context's program has returned; a context (and its "
                               "communicators) lives only while its program runs")
        if threading.get_ident() != self._thread:
            raise RuntimeError(f"replica {self.replica} IPU {self.ipu}'s context used from "
                               f"another thread; each IPU's calls come from its own thread")
        if self._run.interrupted:
            raise KeyboardInterrupt

    def _end(self):
        self._alive = False
        self._run.keep(self._pending)  # until gcl_run has cancelled them
        self._pending = set()

    def _started(self, req):
        self._pending.add(req)

    def _completed(self, req):
        self._pending.discard(req)

    def _pending_on(self, comm):
        return any(r._owner is comm for r in self._pending)

    @property
    def last_error(self):
        """libgcl's text of the last failure of a call without a communicator ("" if none)."""
        return text(_C.gcl_ctx_last_error(self._h)) if self._alive else ""

    def _detail(self):
        return text(_C.gcl_ctx_last_error(self._h))

    def comm(self, kind="all", size=None):
        """A communicator over this replica's group of KIND: "all", "consecutive" or
        "orthogonal" with SIZE replicas per group. Every replica creates its communicators in
        the same order."""
        group = _types.group(kind, size)
        self._enter()
        out = ctypes.c_void_p()
        errors.check(_C.gcl_comm_create(self._h, group, ctypes.byref(out)),
                     lambda: self._detail() or f"group {kind}:{size} does not divide the "
                                               f"job's {self.num_replicas} replicas")
        return _comm.Comm(self, out, kind if kind == "all" else f"{kind}:{size}")

    # Point-to-point between the IPUs of this replica.
    def _p2p_args(self, x, peer, tag, what, writable, dtype):
        xb = _buffers.check(x, what, writable=writable, dtype=dtype)
        peer = _nonneg_int(peer, "dst" if what == "x" else "src")
        return xb, (peer, xb.ptr, xb.count, xb.code, _nonneg_int(tag, "tag", 1 << 20))

    def send(self, x, dst, tag=0, dtype=None):
        """Sends X to IPU position DST of this replica; messages with one TAG arrive in order."""
        xb, args = self._p2p_args(x, dst, tag, "x", False, dtype)
        self._enter()
        errors.check(_C.gcl_send(self._h, *args), self._detail)

    def recv(self, x, src, tag=0, dtype=None):
        """Receives into X (its size and type must match the send's) from IPU position SRC of
        this replica. Returns X."""
        xb, args = self._p2p_args(x, src, tag, "x", True, dtype)
        self._enter()
        errors.check(_C.gcl_recv(self._h, *args), self._detail)
        return x

    def send_start(self, x, dst, tag=0, dtype=None):
        xb, args = self._p2p_args(x, dst, tag, "x", False, dtype)
        return self._p2p_start(_C.gcl_send_start, xb, None, args)

    def recv_start(self, x, src, tag=0, dtype=None):
        xb, args = self._p2p_args(x, src, tag, "x", True, dtype)
        return self._p2p_start(_C.gcl_recv_start, xb, x, args)

    def _p2p_start(self, fn, xb, out, args):
        self._enter()
        req = ctypes.c_void_p()
        errors.check(fn(self._h, *args, ctypes.byref(req)), self._detail)
        return _comm.Request(self, None, req, (xb,), out, self._detail)

    # Simulated time and memory.
    def sim_time(self):
        """This IPU's simulated clock, in seconds since the start of the job."""
        self._enter()
        return _C.gcl_sim_time(self._h)

    def sim_stats(self):
        """This IPU's simulated statistics so far (a SimStats named tuple)."""
        self._enter()
        s = SimStats()
        _C.gcl_sim_stats(self._h, ctypes.byref(s))
        return SimStatsTuple(*(getattr(s, f) for f, _ in SimStats._fields_))

    def charge_compute(self, name, flops, bytes, dtype="f32"):
        """Charges FLOPS floating-point operations at DTYPE's precision, moving BYTES to and
        from tile memory, to this IPU's clock; NAME labels the slice in the trace."""
        code = _types.dtype_code(dtype)
        for what, v in (("flops", flops), ("bytes", bytes)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or \
                    not math.isfinite(v) or v < 0:
                raise ValueError(f"{what} must be a finite non-negative number, not {v!r}")
        self._enter()
        errors.check(_C.gcl_charge_compute(self._h, str(name).encode(), float(flops),
                                           float(bytes), code),
                     lambda: f"flops {flops} or bytes {bytes} out of range")

    def host_exchange(self):
        """Charges one host sync to this IPU's clock, as host time: the IPUs' round trip to the
        host (the pod's host_sync_ns, fitted to Graphcore's MLPerf runs). A pipeline charges it
        every cycle, a single-stage training loop once a step."""
        self._enter()
        errors.check(_C.gcl_sim_host_exchange(self._h), lambda: "no simulated pod")

    def ipu_malloc(self, shape, dtype="f32", label=None):
        """An array of SHAPE and DTYPE in this IPU's simulated SRAM, zero-filled. It stays valid
        until ipu_free() or the instance's finalize (as in C, not through garbage collection).
        In phantom mode it is a PhantomBuffer (a size with no payload)."""
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        for n in shape:
            _nonneg_int(n, "every dimension of shape")
        np_dtype = _types.NUMPY[dtype] if dtype in _types.NUMPY else None
        if np_dtype is None:
            _types.dtype_code(dtype)  # raises, naming the types
        nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
        self._enter()
        out = ctypes.c_void_p()
        name = (label if label is not None else f"python {dtype}{list(shape)}").encode()
        errors.check(_C.gcl_ipu_malloc(self._h, nbytes, name, ctypes.byref(out)), self._detail)
        ptr = out.value or 0
        if _phantom():
            arr = _buffers.PhantomBuffer(ptr, shape, dtype)
        else:
            raw = (ctypes.c_char * max(nbytes, 1)).from_address(ptr)
            ctypes.memset(ptr, 0, nbytes)
            arr = np.frombuffer(raw, np_dtype, count=nbytes // np_dtype.itemsize).reshape(shape)
        self.instance._ipu_memory(self.global_ipu)[ptr] = arr
        return arr

    def ipu_free(self, arr):
        """Frees an array from ipu_malloc on this IPU (it must not be used afterwards)."""
        ptr = arr.ptr if isinstance(arr, _buffers.PhantomBuffer) else \
            (arr.ctypes.data if isinstance(arr, np.ndarray) else None)
        held = self.instance._ipu_memory(self.global_ipu)
        if ptr not in held or (held[ptr] is not arr and not _same_base(held[ptr], arr)):
            raise ValueError(f"not an array from ipu_malloc on replica {self.replica} IPU "
                             f"{self.ipu} (or already freed)")
        self._enter()
        del held[ptr]
        _C.gcl_ipu_free(self._h, ptr)


def _same_base(a, b):
    """Whether numpy array B is A or a full view of it."""
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
        b.base is not None and a.base is b.base and a.nbytes == b.nbytes
