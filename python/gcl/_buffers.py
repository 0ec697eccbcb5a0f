"""Buffers: numpy arrays, CPU torch tensors and anything with the buffer protocol, passed to
libgcl by address (no copy), after checking what libgcl cannot see: the element type, the
shape, C-contiguity, alignment and, for outputs, writability."""

import numpy as np

from . import _types


class PhantomBuffer:
    """IPU memory in phantom mode (poprun --offline-mode, GCL_SIM_PHANTOM=1): an allocation that
    has a size but no payload. Collectives take it and move sizes only; it has no data to
    read, so it is not a numpy array."""

    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), dtype
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * _types.NUMPY[dtype].itemsize

    def __repr__(self):
        return f"PhantomBuffer(shape={self.shape}, dtype={self.dtype!r})"


class Buf:
    """A checked buffer: the object kept alive while libgcl uses it, its address, element count,
    gcl type name and code, and shape."""

    __slots__ = ("obj", "array", "ptr", "count", "dtype", "code", "shape")

    def __init__(self, obj, array, ptr, count, dtype, shape):
        self.obj, self.array, self.ptr, self.count = obj, array, ptr, count
        self.dtype, self.code, self.shape = dtype, _types.dtype_code(dtype), tuple(shape)


def _from_torch(obj, what):
    """A numpy view of a CPU torch tensor (and the gcl type when numpy cannot say it)."""
    t = obj.detach()
    if t.device.type != "cpu":
        raise ValueError(f"{what} is a torch tensor on {t.device}; gcl takes CPU tensors only")
    if str(t.dtype) == "torch.bfloat16":
        import torch
        return t.view(torch.int16).numpy().view(np.uint16), "bf16"
    return t.numpy(), None


def _to_array(obj, what):
    if isinstance(obj, np.ndarray):
        return obj, None
    if type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "detach"):
        return _from_torch(obj, what)
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(f"{what} must be a numpy array, a CPU torch tensor or an object with "
                        f"the buffer protocol, not {type(obj).__name__}") from None
    return np.asarray(view), None


def _reinterpret(arr, what, dtype):
    """ARR's elements as DTYPE: the same dtype, bf16 held in 16-bit integers, or raw bytes."""
    want = _types.NUMPY[dtype]
    if arr.dtype == want:
        return arr
    if dtype == "bf16" and arr.dtype.itemsize == 2 and arr.dtype.kind in "uiV":
        return arr.view(want) if arr.flags.c_contiguous else arr
    if arr.dtype == np.uint8 and arr.ndim == 1 and arr.flags.c_contiguous:
        if arr.size % want.itemsize:
            raise ValueError(f"{what} holds {arr.size} bytes, not a whole number of {dtype} "
                             f"elements ({want.itemsize} bytes each)")
        return arr.view(want)
    raise ValueError(f"{what} has dtype {arr.dtype}, but dtype='{dtype}' needs {want}")


def check(obj, what, writable=False, dtype=None):
    """The Buf of OBJ, or ValueError / TypeError naming WHAT and the problem.
    DTYPE (a gcl type name) overrides the type inferred from the array."""
    if isinstance(obj, PhantomBuffer):
        if dtype is not None and dtype != obj.dtype:
            raise ValueError(f"{what} is a phantom {obj.dtype} buffer, not {dtype}")
        return Buf(obj, None, obj.ptr, obj.size, obj.dtype, obj.shape)
    arr, inferred = _to_array(obj, what)
    if dtype is not None:
        _types.dtype_code(dtype)
        arr = _reinterpret(arr, what, dtype)
    else:
        dtype = inferred or _types.infer(arr.dtype)
        if dtype is None:
            raise ValueError(f"{what} has dtype {arr.dtype}, which is not a gcl type; use "
                             f"float32, float16, int32, int64, uint32, uint64 or bool (native "
                             f"byte order), or pass dtype='bf16' for bfloat16 bits in uint16")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{what} is not C-contiguous (shape {arr.shape}, strides "
                         f"{arr.strides}); gcl works in place on the caller's memory, so pass "
                         f"a contiguous array (np.ascontiguousarray copies)")
    if not arr.flags.aligned:
        raise ValueError(f"{what} is not aligned to its {arr.dtype.itemsize}-byte elements")
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what} is read-only, but it receives the result")
    return Buf(obj, arr, arr.ctypes.data, arr.size, dtype, arr.shape)


def same_kind(a, b, what_a, what_b, same_shape=True):
    """ValueError unless A and B hold the same type (and, when SAME_SHAPE, shape)."""
    if a.dtype != b.dtype:
        raise ValueError(f"{what_a} is {a.dtype} but {what_b} is {b.dtype}")
    if same_shape and a.count != b.count:
        raise ValueError(f"{what_a} has shape {a.shape} ({a.count} elements) but {what_b} has "
                         f"shape {b.shape} ({b.count})")


def result(buf):
    """What a collective returns for its output BUF: the caller's object."""
    return buf.obj
