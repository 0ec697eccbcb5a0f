"""Exceptions: one class per libgcl status (gcl/status.h), all under GclError.

A failing call raises the class of its status with the detail libgcl keeps for it
(gcl_last_error of the communicator, gcl_ctx_last_error of the IPU, or gcl_instance_error),
falling back to the status's description when there is none. Where a built-in exception means
the same, the class derives from it too, so `except ValueError` or `except TimeoutError` work.
"""

from ._lib import lib, text


class GclError(Exception):
    """A libgcl call failed. status: the gcl_status_t value; name: "GCL_ERR_TIMEOUT", ...;
    detail: libgcl's text for this failure."""

    status = None
    from_libgcl = False  # True when raised for a status libgcl returned (check())

    def __init__(self, detail="", status=None):
        if status is not None:
            self.status = status
        known = isinstance(self.status, int)
        self.name = text(lib.gcl_status_name(self.status)) if known else "GCL_ERR_UNKNOWN"
        self.detail = detail or (text(lib.gcl_status_string(self.status)) if known else "")
        super().__init__(f"{self.name}: {self.detail}")


class InvalidArgumentError(GclError, ValueError):
    status = -1


class OutOfMemoryError(GclError):
    """Out of simulated IPU memory (the detail lists what the IPU holds)."""
    status = -2


class NoHostMemoryError(GclError, MemoryError):
    status = -3


class TimeoutError(GclError, TimeoutError):
    """No progress for GCL_TIMEOUT_S seconds; also a built-in TimeoutError."""
    status = -4


class MismatchError(GclError):
    status = -5


class PeerFailedError(GclError):
    status = -6


class SystemCallError(GclError, OSError):
    """An operating system call failed (GCL_ERR_SYSTEM)."""
    status = -7


class MpiError(GclError):
    status = -8


class TransportError(GclError):
    status = -9


class NotSupportedError(GclError, NotImplementedError):
    status = -10


class AbortedError(GclError):
    """Another IPU of this instance failed, so this IPU's call was abandoned."""
    status = -11


class InternalError(GclError):
    status = -12


class InProgressError(GclError):
    status = -13


BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, NoHostMemoryError, TimeoutError, MismatchError,
    PeerFailedError, SystemCallError, MpiError, TransportError, NotSupportedError, AbortedError,
    InternalError, InProgressError)}


def error(status, detail=""):
    """The exception for STATUS (a GclError for a status this module does not know)."""
    cls = BY_STATUS.get(status)
    return cls(detail) if cls else GclError(detail, status)


def check(status, detail_fn):
    """Raises the exception for STATUS unless it is GCL_OK; DETAIL_FN() gives libgcl's text.
    The exception is marked as libgcl's own (from_libgcl): libgcl has recorded its reason."""
    if status != 0:
        e = error(status, detail_fn())
        e.from_libgcl = True
        raise e
