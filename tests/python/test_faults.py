"""Failures across processes: a Python exception on one instance fails the others fast, Ctrl-C
stops a run whose IPUs are busy or blocked, and bad configuration is a clear exception."""

import select
import signal
import subprocess
import time

from helpers import POPRUN, PYTHON, by_instance, env, poprun, run

RAISE_ON_REPLICA_2 = """
import gcl, numpy as np
def program(ctx):
    comm = ctx.comm()
    if ctx.replica == 2:
        raise ValueError("replica 2 cannot go on")
    comm.all_reduce(np.ones(16, np.float32))
with gcl.init() as inst:
    try:
        inst.run(program)
    except Exception as e:
        print(f"run raised {type(e).__name__}: {e}", flush=True)
        raise
"""


def test_exception_on_one_instance_fails_the_others_fast():
    t0 = time.monotonic()
    r = poprun(4, 2, [PYTHON, "-c", RAISE_ON_REPLICA_2], GCL_TIMEOUT_S=120)
    assert time.monotonic() - t0 < 60  # not the 120 s timeout
    assert r.returncode != 0
    out = by_instance(r.stdout)
    assert out[1][-1] == "run raised ValueError: replica 2 cannot go on", out
    assert out[0][-1].startswith("run raised PeerFailedError: GCL_ERR_PEER_FAILED: "), out
    assert "replica 2 (instance 1 on host" in out[0][-1], out
    # The program's own exception, not "the program returned GCL_ERR_INTERNAL" (gcl_ctx_set_error).
    assert "ValueError: replica 2 cannot go on" in out[0][-1], out
    assert "(raised by the program on replica 2 IPU 0)" in r.stderr + r.stdout


BUSY = """
import gcl, numpy as np, sys, time
def program(ctx):
    comm = ctx.comm()
    if ctx.replica == 0:
        print("started", flush=True)
        while True:            # busy, calling gcl but never reaching the collective
            time.sleep(0.05)
            ctx.charge_compute("work", 1e6, 1e3)
    comm.all_reduce(np.ones(4, np.float32))   # the others wait here
with gcl.init(replicas=3) as inst:
    inst.run(program)
"""

STUCK = """
import gcl, threading
def program(ctx):
    if ctx.replica == 0:
        print("started", flush=True)
    threading.Event().wait()   # stuck in Python, never calling gcl again
with gcl.init(replicas=2) as inst:
    inst.run(program)
"""


def start(code):
    p = subprocess.Popen([PYTHON, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env(GCL_TIMEOUT_S=600))
    # run() takes Ctrl-C from before its programs start: "started" is the event to wait on.
    assert p.stdout.readline().strip() == "started"
    return p


def test_ctrl_c_stops_a_run():
    p = start(BUSY)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGINT, err  # Python's exit for an uncaught Ctrl-C
    assert "gcl: interrupted; stopping every IPU's program" in err
    assert err.rstrip().endswith("KeyboardInterrupt"), err


def read_until(stream, text, seconds=60):
    """The lines STREAM gives until one holds TEXT (an event to wait on, not a sleep)."""
    seen, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.5)
        if ready:
            line = stream.readline()
            if not line:
                break
            seen.append(line)
            if text in line:
                return seen
    raise AssertionError(f"no line with {text!r} in {seconds} s: {''.join(seen)}")


def test_second_ctrl_c_exits_at_once():
    p = start(STUCK)
    p.send_signal(signal.SIGINT)
    # The second Ctrl-C once the first is known to have been taken: two signals sent at once
    # could arrive as one on a loaded machine.
    first = read_until(p.stderr, "gcl: interrupted; stopping")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    err = "".join(first) + err
    assert p.returncode == 130, err
    assert "gcl: interrupted again; exiting now" in err


LOOP = """
import gcl, numpy as np
def program(ctx, n):
    ctx.comm().all_reduce(np.ones(1024, np.float32))
    if n == 50 and ctx.replica == 0:
        print("started", flush=True)
with gcl.init() as inst:
    n = 0
    while True:                # run after run: a Ctrl-C finds the instances at different ones
        inst.run(program, n)
        n += 1
"""


def test_ctrl_c_under_poprun_ends_every_instance_at_once():
    # Each instance stops at the run boundary where its Ctrl-C lands: one may finalize while
    # another starts the next run. Before, both then waited (the final barrier and the next
    # run's all_reduce) until --graceful-timeout killed them (4 tries in 6); now the next run
    # fails at once ("has left the job"), the barrier gives up on an instance whose run failed,
    # and a with-block left by KeyboardInterrupt does not turn it into the barrier's error.
    cmd = [POPRUN, "--num-replicas", "4", "--num-instances", "4", "--graceful-timeout", "60",
           PYTHON, "-c", LOOP]
    for attempt in range(3):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env(GCL_TIMEOUT_S=600))
        read_until(p.stdout, "started")
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        took = time.monotonic() - t0
        assert p.returncode == 130, err
        assert "poprun: interrupted by SIGINT; every instance was ended" in err, err
        assert took < 20, f"attempt {attempt}: {took:.1f} s after the Ctrl-C: {err}"
        assert "closing barrier failed" not in err, err


def test_bad_popdist_variable_is_an_exception():
    r = run([PYTHON, "-c", "import gcl; gcl.init()"], POPDIST_NUM_INSTANCES="1",
            POPDIST_NUM_TOTAL_REPLICAS="zero", GCL_LOG_LEVEL="warn")
    assert r.returncode == 1
    assert 'POPDIST_NUM_TOTAL_REPLICAS="zero" is not valid' in r.stderr
    assert r.stderr.rstrip().splitlines()[-1].startswith(
        "gcl.errors.InvalidArgumentError: GCL_ERR_INVALID_ARGUMENT"), r.stderr


def test_missing_library_is_an_import_error():
    r = run([PYTHON, "-c", "import gcl"], GCL_LIBRARY="/nonexistent/libgcl.so")
    assert r.returncode == 1
    assert r.stderr.rstrip().splitlines()[-1].startswith(
        "ImportError: gcl: cannot load GCL_LIBRARY=/nonexistent/libgcl.so"), r.stderr
