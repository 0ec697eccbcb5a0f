"""Communicators and requests: every collective of gcl.h, blocking and non-blocking.

Each collective checks its buffers (gcl._buffers), then calls libgcl with their addresses: the
result lands in the caller's memory, with no copy on the way in or out. A collective returns its
output (the caller's object, or the array it allocated); its _start form returns a Request
whose wait() returns the same. Buffers given to a started collective are kept alive, and must
not be changed, until it completes.
"""

import ctypes

import numpy as np

from . import _buffers, _types, errors
from ._lib import lib, text

_C = lib  # short name for the calls below


class Request:
    """A started collective or point-to-point transfer. wait() blocks until it completes and
    returns its output; test() returns whether it has. Either may be called again afterwards
    (it returns the same answer); a failure is raised once, by the call that completes it."""

    def __init__(self, ctx, owner, handle, keep, out, detail):
        self._ctx, self._owner, self._handle, self._keep = ctx, owner, handle, keep
        self._out, self._detail, self._done = out, detail, False
        ctx._started(self)

    def _finish(self, status):
        self._done = True
        self._ctx._completed(self)
        self._keep = None
        errors.check(status, self._detail)

    def wait(self):
        """Blocks until the transfer completes; returns its output (None for send and
        barrier). Raises the GclError of a failure."""
        if not self._done:
            self._ctx._enter()
            self._finish(_C.gcl_wait(self._handle))
        return self._out

    def test(self):
        """Progresses the transfer without blocking; True once it has completed."""
        if not self._done:
            self._ctx._enter()
            done = ctypes.c_int(0)
            status = _C.gcl_test(self._handle, ctypes.byref(done))
            if status != 0 or done.value:
                self._finish(status)
        return self._done

    @property
    def done(self):
        """Whether wait() or test() has seen the transfer complete."""
        return self._done


class Comm:
    """A communicator over one replica group, for the IPU position of the context that made it
    (ctx.comm()). rank and size are this replica's rank in the group and the group's size."""

    def __init__(self, ctx, handle, kind):
        self._ctx, self._h = ctx, handle
        self.kind = kind
        self.rank = _C.gcl_comm_rank(handle)
        self.size = _C.gcl_comm_size(handle)

    def __repr__(self):
        return f"<gcl.Comm {self.kind} rank {self.rank} of {self.size}>"

    @property
    def last_error(self):
        """libgcl's text of this communicator's last failure ("" when none)."""
        return text(_C.gcl_last_error(self._h)) if self._ctx._alive and self._h else ""

    def _detail(self):
        return text(_C.gcl_last_error(self._h)) if self._h else ""

    def _handle(self):
        """The C communicator, once the context is checked (and this one is not destroyed)."""
        self._ctx._enter()
        if self._h is None:
            raise ValueError("this communicator was destroyed")
        return self._h

    def _call(self, name, *args):
        errors.check(getattr(_C, name)(self._handle(), *args), self._detail)

    def _start(self, name, keep, out, *args):
        req = ctypes.c_void_p()
        errors.check(getattr(_C, name + "_start")(self._handle(), *args, ctypes.byref(req)),
                     self._detail)
        return Request(self._ctx, self, req, keep, out, self._detail)

    # Algorithms.
    def set_algorithm(self, collective, algorithm):
        """Forces ALGORITHM ("ring", ...; "auto" for the automatic choice) for this
        communicator's calls of COLLECTIVE ("all_reduce", ...). Every replica must force the
        same one."""
        errors.check(_C.gcl_comm_set_algorithm(self._handle(), collective.encode(),
                                               algorithm.encode()),
                     lambda: f"{collective} has no algorithm {algorithm!r}; it has "
                             f"{', '.join(algorithms(collective))}")

    def algorithm(self, collective):
        """The algorithm this communicator's last call of COLLECTIVE ran, or None before one."""
        return text(_C.gcl_comm_algorithm(self._handle(), collective.encode())) or None

    # Argument checks shared by the blocking and non-blocking forms.
    def _reduce_args(self, x, y, op, dtype):
        xb = _buffers.check(x, "x", writable=y is None, dtype=dtype)
        yb = xb if y is None else _buffers.check(y, "y", writable=True, dtype=dtype)
        _buffers.same_kind(xb, yb, "x", "y")
        return xb, yb, (xb.ptr, yb.ptr, xb.count, xb.code, _types.op_code(op))

    def _scatter_args(self, x, y, op, dtype):
        xb = _buffers.check(x, "x", writable=y is None, dtype=dtype)
        if xb.count % self.size:
            raise ValueError(f"x has {xb.count} elements, not a multiple of the group's "
                             f"{self.size} replicas")
        n = xb.count // self.size
        if y is None:  # in place: this rank's block of x
            if xb.array is None:
                raise ValueError("a phantom x needs an explicit y")
            y = xb.array.reshape(-1)[self.rank * n:(self.rank + 1) * n]
        yb = _buffers.check(y, "y", writable=True, dtype=dtype)
        _buffers.same_kind(xb, yb, "x", "y", same_shape=False)
        if yb.count != n:
            raise ValueError(f"y has {yb.count} elements, but x's {xb.count} over "
                             f"{self.size} replicas give {n}")
        return xb, yb, (xb.ptr, yb.ptr, n, xb.code, _types.op_code(op))

    def _gather_args(self, x, y, dtype):
        xb = _buffers.check(x, "x", dtype=dtype)
        if y is None:
            y = np.empty((self.size,) + xb.shape, _types.NUMPY[xb.dtype])
        yb = _buffers.check(y, "y", writable=True, dtype=dtype or xb.dtype)
        _buffers.same_kind(xb, yb, "x", "y", same_shape=False)
        if yb.count != self.size * xb.count:
            raise ValueError(f"y has {yb.count} elements, but the group's {self.size} replicas "
                             f"of x's {xb.count} make {self.size * xb.count}")
        return xb, yb, (xb.ptr, yb.ptr, xb.count, xb.code)

    def _broadcast_args(self, x, y, root, dtype):
        xb = _buffers.check(x, "x", writable=y is None, dtype=dtype)
        yb = xb if y is None else _buffers.check(y, "y", writable=True, dtype=dtype)
        _buffers.same_kind(xb, yb, "x", "y")
        return xb, yb, (xb.ptr, yb.ptr, xb.count, xb.code, _int(root, "root"))

    def _all_to_all_args(self, x, y, dtype):
        xb = _buffers.check(x, "x", writable=y is None, dtype=dtype)
        yb = xb if y is None else _buffers.check(y, "y", writable=True, dtype=dtype)
        _buffers.same_kind(xb, yb, "x", "y")
        if xb.count % self.size:
            raise ValueError(f"x has {xb.count} elements, not a multiple of the group's "
                             f"{self.size} replicas")
        return xb, yb, (xb.ptr, yb.ptr, xb.count // self.size, xb.code)

    # Blocking collectives. Y=None means in place (all_gather: a new array).
    def all_reduce(self, x, y=None, op="sum", dtype=None):
        """y[i] = OP over the group of x[i]; in place when Y is None. Returns y."""
        xb, yb, args = self._reduce_args(x, y, op, dtype)
        self._call("gcl_all_reduce", *args)
        return _buffers.result(yb)

    def reduce_scatter(self, x, y=None, op="sum", dtype=None):
        """x holds size blocks; this rank's y gets the reduction of block rank. With Y None, y
        is that block of x itself (in place), returned as a view."""
        xb, yb, args = self._scatter_args(x, y, op, dtype)
        self._call("gcl_reduce_scatter", *args)
        return _buffers.result(yb)

    def all_gather(self, x, y=None, dtype=None):
        """y holds size blocks; block r is rank r's x. With Y None a new array of shape
        (size,) + x.shape is returned. In place when x is y's block rank."""
        xb, yb, args = self._gather_args(x, y, dtype)
        self._call("gcl_all_gather", *args)
        return _buffers.result(yb)

    def broadcast(self, x, y=None, root=0, dtype=None):
        """Every rank's y gets rank ROOT's x; in place when Y is None. Returns y."""
        xb, yb, args = self._broadcast_args(x, y, root, dtype)
        self._call("gcl_broadcast", *args)
        return _buffers.result(yb)

    def all_to_all(self, x, y=None, dtype=None):
        """x and y hold size blocks: block q of rank r's x lands in block r of rank q's y. In
        place when Y is None. Returns y."""
        xb, yb, args = self._all_to_all_args(x, y, dtype)
        self._call("gcl_all_to_all", *args)
        return _buffers.result(yb)

    def barrier(self):
        """Returns once every rank of the group has entered the barrier."""
        self._call("gcl_barrier")

    # Non-blocking forms: the same arguments; they return a Request.
    def all_reduce_start(self, x, y=None, op="sum", dtype=None):
        xb, yb, args = self._reduce_args(x, y, op, dtype)
        return self._start("gcl_all_reduce", (xb, yb), _buffers.result(yb), *args)

    def reduce_scatter_start(self, x, y=None, op="sum", dtype=None):
        xb, yb, args = self._scatter_args(x, y, op, dtype)
        return self._start("gcl_reduce_scatter", (xb, yb), _buffers.result(yb), *args)

    def all_gather_start(self, x, y=None, dtype=None):
        xb, yb, args = self._gather_args(x, y, dtype)
        return self._start("gcl_all_gather", (xb, yb), _buffers.result(yb), *args)

    def broadcast_start(self, x, y=None, root=0, dtype=None):
        xb, yb, args = self._broadcast_args(x, y, root, dtype)
        return self._start("gcl_broadcast", (xb, yb), _buffers.result(yb), *args)

    def all_to_all_start(self, x, y=None, dtype=None):
        xb, yb, args = self._all_to_all_args(x, y, dtype)
        return self._start("gcl_all_to_all", (xb, yb), _buffers.result(yb), *args)

    def barrier_start(self):
        return self._start("gcl_barrier", (), None)

    def destroy(self):
        """Frees the communicator now (it is freed at the end of the program otherwise)."""
        h = self._handle()
        if self._ctx._pending_on(self):
            raise ValueError("this communicator has requests not yet completed; wait for them "
                             "before destroying it")
        _C.gcl_comm_destroy(h)
        self._h = None


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, not {type(v).__name__}")
    return int(v)


def algorithms(collective):
    """The names of COLLECTIVE's algorithms ("all_reduce", ...), as libgcl lists them."""
    n = _C.gcl_algorithms(collective.encode(), None, 0)
    if n < 0:
        raise ValueError(f"unknown collective {collective!r}")
    names = (ctypes.c_char_p * max(n, 1))()
    _C.gcl_algorithms(collective.encode(), names, n)
    return [text(names[i]) for i in range(n)]
