"""The gcl package in one instance: buffers (zero copy, checks), exceptions for bad input and
failed calls, contexts, simulated time and memory, torch tensors.

Each bad input is refused by every replica alike, inside the program, so no collective is left
half-entered; the tests that make a program fail on purpose run alone (not under poprun),
because a failed run marks the instance failed for the rest of the job."""

import threading
import time

import numpy as np
import pytest

import gcl
from gcl import errors


def each_ipu(inst, fn):
    """Runs FN(ctx, comm) on every IPU; returns the results."""
    return inst.run(lambda ctx: fn(ctx, ctx.comm()))


def raises(exc, match, fn):
    """FN() raises EXC with MATCH in its text; returns the exception."""
    with pytest.raises(exc, match=match) as info:
        fn()
    return info.value


# Buffers: zero copy and what they must be.

def test_in_place_and_out_of_place_are_the_callers_memory(inst):
    def program(ctx, comm):
        x = np.full((2, 3), ctx.replica + 1, np.int64)
        y = np.zeros_like(x)
        assert comm.all_reduce(x, y) is y and (x == ctx.replica + 1).all()
        assert comm.all_reduce(x) is x
        n = comm.size
        return int(y[0, 0]), int(x[1, 2]), n * (n + 1) // 2

    for got_y, got_x, want in each_ipu(inst, program):
        assert got_y == got_x == want


def test_buffer_protocol_objects(inst):
    def program(ctx, comm):
        raw = bytearray(np.full(4, 2.0, np.float32).tobytes())
        comm.all_reduce(raw, dtype="f32")  # raw bytes, read as f32, in place
        mv = memoryview(np.ones(3, np.int32))
        out = comm.all_reduce(mv, np.empty(3, np.int32))
        return np.frombuffer(raw, np.float32).tolist(), out.tolist(), comm.size

    for f, i, n in each_ipu(inst, program):
        assert f == [2.0 * n] * 4 and i == [n] * 3


@pytest.mark.parametrize("make, match", [
    (lambda: np.ones(4), "float64, which is not a gcl type"),
    (lambda: np.ones(8, np.float32)[::2], "not C-contiguous"),
    (lambda: np.ones(4, ">f4"), "not a gcl type"),
    (lambda: np.ones(4, np.complex64), "complex64"),
    (lambda: np.ones(4, np.uint16), "dtype='bf16'"),
])
def test_bad_input_arrays(inst, make, match):
    each_ipu(inst, lambda ctx, comm: raises(ValueError, match, lambda: comm.all_reduce(make())))


def test_bad_arguments(inst):
    def program(ctx, comm):
        f = np.ones(4, np.float32)
        ro = np.ones(4, np.float32)
        ro.flags.writeable = False
        raises(ValueError, "y is read-only", lambda: comm.all_reduce(f, ro))
        raises(ValueError, "x is read-only", lambda: comm.all_reduce(ro))
        raises(ValueError, r"x has shape \(4,\) \(4 elements\) but y has shape \(5,\)",
               lambda: comm.all_reduce(f, np.ones(5, np.float32)))
        raises(ValueError, "x is f32 but y is i32", lambda: comm.all_reduce(f, np.ones(4, "i4")))
        raises(ValueError, "dtype='f16' needs float16", lambda: comm.all_reduce(f, dtype="f16"))
        raises(ValueError, "unknown type 'f64'", lambda: comm.all_reduce(f, dtype="f64"))
        raises(ValueError, "unknown operator 'add'", lambda: comm.all_reduce(f, op="add"))
        raises(TypeError, "numpy array, a CPU torch tensor", lambda: comm.all_reduce([1.0, 2.0]))
        raises(ValueError, "not a multiple of the group's",
               lambda: comm.reduce_scatter(np.ones(comm.size * 2 + 1, np.float32)))
        raises(ValueError, "y has 3 elements",
               lambda: comm.all_gather(f, np.ones(3, np.float32)))
        raises(TypeError, "root must be an integer", lambda: comm.broadcast(f, root="0"))
        raises(ValueError, "unknown group kind 'ring'", lambda: ctx.comm("ring", 2))
        raises(ValueError, "needs a size", lambda: ctx.comm("consecutive"))
        raises(ValueError, "tag must be below", lambda: ctx.send(f, 0, tag=1 << 20))

    each_ipu(inst, program)


def test_library_errors_carry_its_text(inst):
    def program(ctx, comm):
        e = raises(gcl.InvalidArgumentError, "mean is defined on floating-point types only",
                   lambda: comm.all_reduce(np.ones(3, np.int32), op="mean"))
        assert isinstance(e, ValueError) and e.status == -1
        assert e.name == "GCL_ERR_INVALID_ARGUMENT" and e.detail == comm.last_error
        raises(gcl.InvalidArgumentError, r"root 7 is not a rank of the group \(0 \.\. 3\)",
               lambda: comm.broadcast(np.ones(2, np.float32), root=7))
        raises(gcl.InvalidArgumentError, "consecutive:3 over 4 replicas: the replica group size must divide",
               lambda: ctx.comm("consecutive", 3))
        raises(gcl.InvalidArgumentError, "all_reduce has no algorithm 'nope'; it has "
               "clockwise_ring", lambda: comm.set_algorithm("all_reduce", "nope"))
        raises(ValueError, "unknown collective", lambda: gcl.algorithms("reduce"))

    each_ipu(inst, program)


def test_mismatch_is_an_error_naming_both_sides(inst):
    def program(ctx, comm):
        comm2 = ctx.comm()
        n = 4 if ctx.replica == 0 else 5
        e = raises(gcl.MismatchError, "", lambda: comm2.all_reduce(np.ones(n, np.float32)))
        return e.detail

    for text in each_ipu(inst, program):
        assert "mismatched calls" in text and "4 x f32" in text and "5 x f32" in text, text


def test_exception_hierarchy_matches_the_library():
    assert gcl.TimeoutError is errors.TimeoutError and issubclass(gcl.TimeoutError, TimeoutError)
    names = {}
    for status, cls in errors.BY_STATUS.items():
        e = cls()
        assert isinstance(e, gcl.GclError) and e.status == status
        names[e.name] = cls.__name__
        assert e.detail and e.detail != "unknown status"
    assert names == {
        "GCL_ERR_INVALID_ARGUMENT": "InvalidArgumentError",
        "GCL_ERR_OUT_OF_MEMORY": "OutOfMemoryError",
        "GCL_ERR_NO_HOST_MEMORY": "NoHostMemoryError",
        "GCL_ERR_TIMEOUT": "TimeoutError",
        "GCL_ERR_MISMATCH": "MismatchError",
        "GCL_ERR_PEER_FAILED": "PeerFailedError",
        "GCL_ERR_SYSTEM": "SystemCallError",
        "GCL_ERR_MPI": "MpiError",
        "GCL_ERR_TRANSPORT": "TransportError",
        "GCL_ERR_NOT_SUPPORTED": "NotSupportedError",
        "GCL_ERR_ABORTED": "AbortedError",
        "GCL_ERR_INTERNAL": "InternalError",
        "GCL_ERR_IN_PROGRESS": "InProgressError",
    }
    assert errors.error(-99).name == "GCL_ERR_UNKNOWN"


def test_init_arguments():
    raises(ValueError, "replicas must be a positive integer", lambda: gcl.init(replicas=0))
    raises(ValueError, "ipus_per_replica must be", lambda: gcl.init(ipus_per_replica="2"))


# Contexts.

def test_context_fields(inst):
    info = inst.info
    got = inst.run(lambda ctx: (ctx.replica, ctx.ipu, ctx.global_ipu, ctx.num_replicas))
    first = info.replica_offset
    assert got == [(first + k, 0, first + k, info.num_replicas)
                   for k in range(info.num_local_replicas)]
    assert inst.topology and inst.topology_ipus >= info.num_replicas


def test_context_outside_its_program_or_thread(inst):
    kept = []

    def program(ctx):
        comm = ctx.comm()
        kept.append((ctx, comm))
        box = []
        t = threading.Thread(target=lambda: box.append(_catch(lambda: comm.barrier())))
        t.start()
        t.join()
        assert isinstance(box[0], RuntimeError) and "another thread" in str(box[0])

    inst.run(program)
    ctx, comm = kept[0]
    raises(RuntimeError, "program has returned", lambda: comm.barrier())
    raises(RuntimeError, "program has returned", lambda: ctx.comm())


def _catch(fn):
    try:
        fn()
    except Exception as e:  # noqa: B902
        return e
    return None


def test_destroyed_communicator(inst):
    def program(ctx):
        comm = ctx.comm()
        req = comm.barrier_start()
        raises(ValueError, "requests not yet completed", comm.destroy)
        req.wait()
        comm.destroy()
        raises(ValueError, "was destroyed", comm.barrier)

    inst.run(program)


# Programs that fail.

def test_exception_in_one_program_fails_the_run_fast(inst):
    def program(ctx):
        comm = ctx.comm()
        if ctx.replica == 1:
            raise KeyError("only replica 1")
        comm.all_reduce(np.ones(8, np.float32))  # the others are aborted, not left waiting

    t0 = time.monotonic()
    e = raises(KeyError, "only replica 1", lambda: inst.run(program))
    assert time.monotonic() - t0 < 20
    assert "(raised by the program on replica 1 IPU 0)" in e.__notes__
    assert inst.run(lambda ctx: ctx.comm().all_reduce(np.ones(1, np.int32))[0]) == \
        [inst.info.num_replicas] * inst.info.num_local_replicas


def test_aborted_peers_see_aborted_error(inst):
    seen = {}

    def program(ctx):
        comm = ctx.comm()
        if ctx.replica == 0:
            raise RuntimeError("replica 0 gives up")
        try:
            comm.all_reduce(np.ones(8, np.float32))
        except gcl.GclError as e:
            seen[ctx.replica] = (type(e), e.detail)
            raise

    raises(RuntimeError, "replica 0 gives up", lambda: inst.run(program))
    assert {t for t, _ in seen.values()} <= {gcl.AbortedError, gcl.MismatchError}, seen
    # They quote the program's own exception (recorded with gcl_ctx_set_error).
    for t, detail in seen.values():
        assert t is not gcl.AbortedError or "RuntimeError: replica 0 gives up" in detail, detail


def test_program_returning_a_status(inst):
    raises(gcl.NotSupportedError, "the program returned GCL_ERR_NOT_SUPPORTED",
           lambda: inst.run(lambda ctx: -10 if ctx.replica == 0 else None))


def test_run_returns_results_and_passes_arguments(inst):
    got = inst.run(lambda ctx, a, b=0: (ctx.replica, a + b), 2, b=3)
    assert got == [(inst.info.replica_offset + k, 5)
                   for k in range(inst.info.num_local_replicas)]


# Simulated time and memory.

def test_charge_compute_and_sim_stats(inst):
    def program(ctx):
        t0, s0 = ctx.sim_time(), ctx.sim_stats()
        ctx.charge_compute("matmul", 2e9, 1e6, "f32")
        t1 = ctx.sim_time()
        ctx.charge_compute("matmul16", 2e9, 1e6, "f16")
        s1 = ctx.sim_stats()
        raises(ValueError, "flops must be a finite", lambda: ctx.charge_compute("x", -1, 0))
        raises(ValueError, "bytes must be a finite",
               lambda: ctx.charge_compute("x", 1, float("nan")))
        return t1 - t0, s1.total_s - t1, s1.compute_s - s0.compute_s

    for d32, d16, dc in inst.run(program):
        # 2 GFLOP at the GC200's peaks (sim/src/device/device.c): 62.5 TFLOPS f32, 250 TFLOPS f16.
        assert d32 == pytest.approx(2e9 / 62.5e12, rel=0.01)
        assert d16 == pytest.approx(2e9 / 250e12, rel=0.01)
        assert dc == pytest.approx(d32 + d16)


def test_host_exchange(inst):
    def program(ctx):
        t0, s0 = ctx.sim_time(), ctx.sim_stats()
        ctx.host_exchange()
        s1 = ctx.sim_stats()
        return ctx.sim_time() - t0, s1.host_wait_s - s0.host_wait_s

    for dt, dh in inst.run(program):
        # host_sync_ns, fitted to the MLPerf v1.0 and v1.1 runs (sim/src/device/params.c): 1.45 ms.
        assert dt == pytest.approx(1.448e-3, rel=0.01)
        assert dh == pytest.approx(dt)


def test_ipu_malloc(inst):
    def program(ctx):
        comm = ctx.comm()
        x = ctx.ipu_malloc((4, 5), "i32", "test")
        assert x.shape == (4, 5) and x.dtype == np.int32 and x.flags.writeable
        assert x.ctypes.data % 64 == 0 and not x.any()
        used = ctx.sim_stats().memory_used
        assert used >= x.nbytes
        x[:] = 1
        comm.all_reduce(x)
        total = int(x.sum())
        ctx.ipu_free(x)
        raises(ValueError, "not an array from ipu_malloc", lambda: ctx.ipu_free(x))
        raises(ValueError, "not an array from ipu_malloc", lambda: ctx.ipu_free(np.ones(2)))
        e = raises(gcl.OutOfMemoryError, "out of simulated IPU memory",
                   lambda: ctx.ipu_malloc(1 << 31, "f32", "too big"))
        assert "too big" in e.detail
        raises(ValueError, "unknown type 'x'", lambda: ctx.ipu_malloc(3, "x"))
        return total, used - ctx.sim_stats().memory_used

    for total, freed in inst.run(program):
        assert total == 20 * inst.info.num_replicas and freed >= 80


# torch tensors.

def test_torch_tensors_in_place(inst):
    torch = pytest.importorskip("torch")

    def program(ctx):
        comm = ctx.comm()
        t = torch.full((3, 2), float(ctx.replica))
        assert comm.all_reduce(t, op="max") is t  # through .numpy(): the tensor itself changes
        p = torch.nn.Parameter(torch.ones(4))
        p.grad = torch.ones(4) * (ctx.replica + 1)
        comm.all_reduce(p.grad, op="mean")
        b = torch.ones(5, dtype=torch.bfloat16)
        comm.all_reduce(b)
        raises(ValueError, "not C-contiguous", lambda: comm.all_reduce(torch.ones(4, 4).t()))
        return t.max().item(), p.grad[0].item(), b.float()[0].item(), comm.size

    for tmax, mean, bsum, n in inst.run(program):
        assert tmax == n - 1 and mean == (n + 1) / 2 and bsum == n
