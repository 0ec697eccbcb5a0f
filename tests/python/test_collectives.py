"""Every collective and type against numpy references (refs.py), for every valid operator and
every replica group the job's size allows, blocking and non-blocking, in place and out of place.

Runs alone (GCL_TEST_REPLICAS replicas in one instance) and under poprun over several instances:
each test is one run() of every local IPU, which compares its own output bitwise."""

import numpy as np
import pytest

import gcl
from helpers import wait_test
from refs import make, members, reduce

DTYPES = gcl.DTYPES
COUNTS = (1, 13, 1000)
MODES = ("blocking", "in_place", "start_wait", "start_test")


def groups(n):
    out = [("all", None)]
    for k in (2, 3):
        if n % k == 0 and n > k:
            out += [("consecutive", k), ("orthogonal", k)]
    return out


def valid_ops(dtype):
    ops = []
    for op in gcl.OPS:
        try:
            gcl.check_op(dtype, op)
            ops.append(op)
        except ValueError:
            pass
    return ops


def each_case(ctx, fn):
    """Calls FN(comm, group, count, mode) for every group, count and mode, in one order."""
    for kind, size in groups(ctx.num_replicas):
        comm = ctx.comm(kind, size)
        group = members(kind, size, ctx.num_replicas, ctx.replica)
        assert comm.size == len(group) and group[comm.rank] == ctx.replica
        for count in COUNTS:
            for mode in MODES:
                fn(comm, group, count, mode)


def call(comm, name, mode, x, y, **kw):
    """The collective NAME in MODE; returns its output."""
    if mode in ("blocking", "in_place"):
        return getattr(comm, name)(x, y, **kw)
    req = getattr(comm, name + "_start")(x, y, **kw)
    return req.wait() if mode == "start_wait" else wait_test(req)


def expect(got, want, what):
    got = np.asarray(got).reshape(-1)
    assert got.dtype == want.dtype, what
    if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        bad = np.flatnonzero(got != want)[:5]
        raise AssertionError(f"{what}: elements {bad.tolist()} are {got[bad].tolist()}, "
                             f"expected {want[bad].tolist()}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce(inst, dtype):
    def case(ctx, comm, group, count, mode):
        for op in valid_ops(dtype):
            x = make(ctx.replica, 0, count, dtype, op)
            want = reduce(group, 0, count, dtype, op, ctx.replica)
            y = None if mode in ("in_place", "start_test") else np.empty_like(x)
            out = call(comm, "all_reduce", mode, x, y, op=op,
                       dtype="bf16" if dtype == "bf16" else None)
            assert out is (x if y is None else y)
            expect(out, want, f"all_reduce {dtype} {op} {comm.kind} count {count} {mode}")

    inst.run(lambda ctx: each_case(ctx, lambda *a: case(ctx, *a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter(inst, dtype):
    def case(ctx, comm, group, count, mode):
        for op in valid_ops(dtype):
            x = make(ctx.replica, 0, count * comm.size, dtype, op)
            want = reduce(group, comm.rank * count, count, dtype, op, ctx.replica)
            y = None if mode in ("in_place", "start_test") else np.empty(count, x.dtype)
            out = call(comm, "reduce_scatter", mode, x, y, op=op,
                       dtype="bf16" if dtype == "bf16" else None)
            if y is None:  # in place: the result is this rank's block of x itself
                assert np.shares_memory(out, x)
            expect(out, want, f"reduce_scatter {dtype} {op} {comm.kind} count {count} {mode}")

    inst.run(lambda ctx: each_case(ctx, lambda *a: case(ctx, *a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather(inst, dtype):
    def case(ctx, comm, group, count, mode):
        want = np.concatenate([make(m, 0, count, dtype, "sum") for m in group])
        kw = {"dtype": "bf16"} if dtype == "bf16" else {}
        if mode == "in_place":  # x is this rank's block of y
            y = np.zeros(count * comm.size, want.dtype)
            y[comm.rank * count:(comm.rank + 1) * count] = make(ctx.replica, 0, count, dtype,
                                                                "sum")
            out = comm.all_gather(y[comm.rank * count:(comm.rank + 1) * count], y, **kw)
        else:
            x = make(ctx.replica, 0, count, dtype, "sum")
            out = call(comm, "all_gather", mode, x, None if mode == "start_test" else
                       np.empty(count * comm.size, x.dtype), **kw)
            if mode == "start_test":
                assert out.shape == (comm.size, count)
        expect(out, want, f"all_gather {dtype} {comm.kind} count {count} {mode}")

    inst.run(lambda ctx: each_case(ctx, lambda *a: case(ctx, *a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast(inst, dtype):
    def case(ctx, comm, group, count, mode):
        for root in sorted({0, comm.size - 1}):
            x = make(ctx.replica, 0, count, dtype, "sum")
            want = make(group[root], 0, count, dtype, "sum")
            y = None if mode in ("in_place", "start_test") else np.empty_like(x)
            out = call(comm, "broadcast", mode, x, y, root=root,
                       dtype="bf16" if dtype == "bf16" else None)
            expect(out, want, f"broadcast {dtype} root {root} {comm.kind} count {count} {mode}")

    inst.run(lambda ctx: each_case(ctx, lambda *a: case(ctx, *a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_to_all(inst, dtype):
    def case(ctx, comm, group, count, mode):
        x = make(ctx.replica, 0, count * comm.size, dtype, "sum")
        want = np.concatenate([make(m, comm.rank * count, count, dtype, "sum") for m in group])
        y = None if mode in ("in_place", "start_test") else np.empty_like(x)
        out = call(comm, "all_to_all", mode, x, y, dtype="bf16" if dtype == "bf16" else None)
        expect(out, want, f"all_to_all {dtype} {comm.kind} count {count} {mode}")

    inst.run(lambda ctx: each_case(ctx, lambda *a: case(ctx, *a)))


def test_barrier_and_outstanding_requests(inst):
    """Several requests at once, completed in reverse order; barriers blocking and not."""
    def program(ctx):
        comm = ctx.comm()
        xs = [make(ctx.replica, 0, 100 * (k + 1), "f32", "sum") for k in range(3)]
        reqs = [comm.all_reduce_start(x, op="sum") for x in xs]
        barrier = comm.barrier_start()
        for k in reversed(range(3)):
            expect(reqs[k].wait(), reduce(range(ctx.num_replicas), 0, 100 * (k + 1), "f32",
                                          "sum", ctx.replica), f"request {k}")
            assert reqs[k].done and reqs[k].wait() is xs[k]  # a second wait answers again
        assert barrier.wait() is None
        comm.barrier()

    inst.run(program)


def test_large_all_reduce(inst):
    """A few MiB: pipelined chunks in every transport."""
    def program(ctx):
        comm = ctx.comm()
        x = make(ctx.replica, 0, 3 << 20 | 5, "f32", "sum")
        expect(comm.all_reduce(x, np.empty_like(x)),
               reduce(range(ctx.num_replicas), 0, x.size, "f32", "sum", ctx.replica), "large")

    inst.run(program)


@pytest.mark.parametrize("algorithm", gcl.algorithms("all_reduce"))
def test_forced_algorithm(inst, algorithm):
    def program(ctx):
        comm = ctx.comm()
        comm.set_algorithm("all_reduce", algorithm)
        x = make(ctx.replica, 0, 777, "i32", "sum")
        expect(comm.all_reduce(x), reduce(range(ctx.num_replicas), 0, 777, "i32", "sum",
                                          ctx.replica), algorithm)
        return comm.algorithm("all_reduce")

    ran = inst.run(program)
    assert set(ran) <= {algorithm, "host_direct"}, ran
