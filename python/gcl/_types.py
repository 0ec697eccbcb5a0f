"""Element types, operators and replica groups: names as libgcl parses them (gcl/types.h)."""

import ctypes

import numpy as np

from ._lib import Group, lib, text

# gcl type name -> numpy dtype of the elements. bf16 has no numpy type: it is held in uint16
# (the bfloat16 bit pattern), or in a 2-byte dtype named "bfloat16" (ml_dtypes, if present).
NUMPY = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}
DTYPES = tuple(NUMPY)
OPS = ("sum", "mean", "mul", "min", "max", "square_add", "logical_and", "logical_or", "local")
GROUPS = ("all", "consecutive", "orthogonal")
_GROUP_KIND = {"all": 0, "consecutive": 1, "orthogonal": 2}  # gcl_group_kind_t

_INFER = {dt: name for name, dt in NUMPY.items() if name != "bf16"}


def _codes(fn, names):
    """{name: value} as libgcl parses NAMES (once, at import: no C call per collective)."""
    out = {}
    for name in names:
        v = ctypes.c_int()
        if fn(name.encode(), ctypes.byref(v)) == 0:
            out[name] = v.value
    return out


_DTYPE_CODES = _codes(lib.gcl_dtype_parse, DTYPES)
_OP_CODES = _codes(lib.gcl_redop_parse, OPS)


def _lookup(codes, what, name):
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string ({', '.join(codes)}), not "
                        f"{type(name).__name__}")
    try:
        return codes[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}: expected one of {', '.join(codes)}") from None


def dtype_code(name):
    """The gcl_dtype_t of NAME ("f32", ...)."""
    return _lookup(_DTYPE_CODES, "type", name)


def op_code(name):
    """The gcl_redop_t of NAME ("sum", ...)."""
    return _lookup(_OP_CODES, "operator", name)


def check_op(dtype, op):
    """Raises ValueError with libgcl's sentence when OP cannot reduce elements of DTYPE."""
    why = ctypes.c_char_p()
    if lib.gcl_redop_check(dtype_code(dtype), op_code(op), ctypes.byref(why)) != 0:
        raise ValueError(f"operator {op} on {dtype}: {text(why.value)}")


def infer(np_dtype):
    """The gcl type name of a numpy dtype, or None when it is not one."""
    if np_dtype.name == "bfloat16" and np_dtype.itemsize == 2:
        return "bf16"
    return _INFER.get(np_dtype) if np_dtype.isnative else None


def group(kind, size):
    """gcl_group_t from a kind ("all", "consecutive", "orthogonal") and a group size."""
    if kind not in _GROUP_KIND:
        raise ValueError(f"unknown group kind {kind!r}: expected all, consecutive or orthogonal")
    if kind == "all":
        if size is not None:
            raise ValueError("group 'all' takes no size")
        return Group(0, 0)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"group '{kind}' needs a size, a positive integer (got {size!r})")
    return Group(_GROUP_KIND[kind], size)
