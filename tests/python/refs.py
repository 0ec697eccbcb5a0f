"""Inputs and independent numpy references for the collective tests.

Inputs are small integers (and for mul mostly ones), so every operator's exact result is
representable in every type and the order of the folds cannot change it: the references compare
bitwise. mean follows libgcl's documented rule: the exact sum, divided once by the group size in
f32, then rounded to the type.
"""

import numpy as np

STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32,
           "i64": np.int64, "u32": np.uint32, "u64": np.uint64, "bool": np.bool_}
FLOATS = ("f32", "f16", "bf16")


def members(kind, size, n, replica):
    """The global replicas of REPLICA's group, by rank (GCL's CommGroup rule)."""
    if kind == "all":
        return list(range(n))
    if kind == "consecutive":
        return [replica // size * size + q for q in range(size)]
    stride = n // size
    return [replica % stride + q * stride for q in range(size)]


def values(replica, index, dtype, op):
    """Exact values (float64) of elements INDEX of REPLICA's input."""
    k = (replica * 7 + index * 3) % 5
    if dtype == "bool":
        return ((replica * 3 + index) % 4 != 0).astype(np.float64)
    if op == "mul":  # mostly ones, some twos (and minus ones where signed)
        neg = dtype in FLOATS or dtype[0] == "i"
        return np.where((replica + index) % 4 == 0, np.where(index % 2 & neg, -1.0, 2.0), 1.0)
    if dtype[0] == "u":
        return k.astype(np.float64)
    return k.astype(np.float64) - 2


def bf16_bits(f32):
    """bfloat16 bit patterns of float32 values, rounded to nearest even."""
    x = np.asarray(f32, np.float32).view(np.uint32).astype(np.uint64)
    return ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)


def encode(v, dtype):
    """Exact values V as an array of DTYPE's storage."""
    if dtype == "bf16":
        return bf16_bits(np.asarray(v, np.float32))
    return np.asarray(v).astype(STORAGE[dtype])


def make(replica, first, count, dtype, op):
    return encode(values(replica, np.arange(first, first + count), dtype, op), dtype)


def reduce(group, first, count, dtype, op, own):
    """OP over GROUP's replicas of elements [FIRST, FIRST + COUNT), for the replica OWN."""
    idx = np.arange(first, first + count)
    vs = [values(m, idx, dtype, op) for m in group]
    if op in ("sum", "mean"):
        r = np.sum(vs, axis=0)
    elif op == "square_add":
        r = np.sum(np.square(vs), axis=0)
    elif op == "mul":
        r = np.prod(vs, axis=0)
    elif op == "min":
        r = np.min(vs, axis=0)
    elif op == "max":
        r = np.max(vs, axis=0)
    elif op == "logical_and":
        r = np.all(np.array(vs) != 0, axis=0).astype(np.float64)
    elif op == "logical_or":
        r = np.any(np.array(vs) != 0, axis=0).astype(np.float64)
    else:  # local
        r = values(own, idx, dtype, op)
    if op == "mean":
        r = r.astype(np.float32) / np.float32(len(group))
    return encode(r, dtype)
