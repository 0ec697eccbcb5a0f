"""gcl: the Python binding of libgcl, the GCL-style collective library of the simulated IPU
runtime (ctypes over the public C API, gcl/include/gcl/*.h).

    import gcl, numpy as np

    def program(ctx):                       # runs on every local simulated IPU, SPMD
        comm = ctx.comm()                   # group "all"; ctx.comm("consecutive", 2), ...
        x = np.full(4, ctx.replica, np.float32)
        comm.all_reduce(x, op="sum")        # in place; all_reduce(x, y) out of place
        req = comm.all_reduce_start(x, op="mean")
        req.wait()

    with gcl.init(replicas=4) as inst:      # under poprun, POPDIST_* win over the arguments
        inst.run(program)

Buffers are numpy arrays, CPU torch tensors or anything with the buffer protocol, used in place
(no copy). Every failure is a GclError subclass carrying libgcl's text (gcl.errors).
"""

from . import errors
from ._buffers import PhantomBuffer
from ._comm import Comm, Request, algorithms
from ._context import Ctx
from ._instance import Instance, init
from ._lib import path as library_path, source as library_source
from ._types import DTYPES, GROUPS, NUMPY as NUMPY_DTYPES, OPS, check_op
from .errors import (AbortedError, GclError, InProgressError, InternalError,
                     InvalidArgumentError, MismatchError, MpiError, NoHostMemoryError,
                     NotSupportedError, OutOfMemoryError, PeerFailedError, SystemCallError,
                     TimeoutError, TransportError)

from ._version import __version__  # libgcl's (gcl/version.h); the library must be the same

__all__ = [
    "init", "Instance", "Ctx", "Comm", "Request", "PhantomBuffer", "algorithms", "check_op",
    "DTYPES", "OPS", "GROUPS", "NUMPY_DTYPES", "library_path", "library_source", "errors",
    "GclError", "InvalidArgumentError", "OutOfMemoryError", "NoHostMemoryError", "MismatchError",
    "PeerFailedError", "SystemCallError", "MpiError", "TransportError", "NotSupportedError",
    "AbortedError", "InternalError", "InProgressError",
]
