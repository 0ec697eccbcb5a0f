"""Point-to-point between the IPUs of a replica (pipeline stages), and collectives of each IPU
position. Needs two or more IPUs per replica (GCL_TEST_IPUS_PER_REPLICA=2, or poprun
--ipus-per-replica 2)."""

import numpy as np
import pytest

import gcl
from helpers import wait_test
from refs import make


@pytest.fixture(autouse=True)
def needs_pipeline(inst):
    if inst.info.ipus_per_replica < 2:
        pytest.skip("needs 2 or more IPUs per replica")


@pytest.mark.parametrize("dtype", gcl.DTYPES)
def test_ring_of_stages(inst, dtype):
    """Each IPU sends to the next position (blocking) and the one after (non-blocking)."""
    ipr = inst.info.ipus_per_replica
    kw = {"dtype": "bf16"} if dtype == "bf16" else {}

    def program(ctx):
        nxt, prv = (ctx.ipu + 1) % ipr, (ctx.ipu - 1) % ipr
        mine = make(ctx.global_ipu, 0, 257, dtype, "sum")
        got = np.zeros_like(mine)
        if ctx.ipu % 2 == 0:  # even positions send first, so blocking calls pair up
            ctx.send(mine, nxt, tag=3, **kw)
            ctx.recv(got, prv, tag=3, **kw)
        else:
            ctx.recv(got, prv, tag=3, **kw)
            ctx.send(mine, nxt, tag=3, **kw)
        want = make(ctx.replica * ipr + prv, 0, 257, dtype, "sum")
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
        r = ctx.recv_start(np.zeros_like(mine), prv, tag=7, **kw)
        s = ctx.send_start(mine, nxt, tag=7, **kw)
        assert s.wait() is None
        assert np.array_equal(wait_test(r).view(np.uint8), want.view(np.uint8))

    inst.run(program)


def test_messages_of_one_tag_arrive_in_order(inst):
    def program(ctx):
        if ctx.ipu == 0:
            for k in range(5):
                ctx.send(np.full(3, k, np.int32), 1, tag=1)
        elif ctx.ipu == 1:
            got = [int(ctx.recv(np.empty(3, np.int32), 0, tag=1)[0]) for _ in range(5)]
            assert got == list(range(5))

    inst.run(program)


def test_size_mismatch_and_bad_peer(inst):
    def program(ctx):
        if ctx.ipu == 0:
            with pytest.raises(gcl.MismatchError):
                ctx.send(np.ones(4, np.float32), 1, tag=2)
        elif ctx.ipu == 1:
            with pytest.raises(gcl.MismatchError) as e:
                ctx.recv(np.ones(5, np.float32), 0, tag=2)
            assert e.value.detail == ctx.last_error and e.value.detail
        with pytest.raises(gcl.InvalidArgumentError):
            ctx.send(np.ones(1, np.float32), inst.info.ipus_per_replica + 3)
        with pytest.raises(ValueError, match="dst must be a non-negative integer"):
            ctx.send(np.ones(1, np.float32), -1)

    inst.run(program)


def test_collectives_per_ipu_position(inst):
    """Every IPU position all-reduces over the replicas, with its own communicator."""
    def program(ctx):
        comm = ctx.comm()
        x = np.full(6, ctx.ipu + 10 * ctx.replica, np.int64)
        comm.all_reduce(x)
        n = ctx.num_replicas
        assert (x == n * ctx.ipu + 10 * n * (n - 1) // 2).all()

    inst.run(program)
