"""Helpers of the Python tests: running the tools of this build, bounded waits."""

import os
import subprocess
import sys
import time

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("GCL_BUILD_DIR", os.path.join(CHECKOUT, "build"))
POPRUN = os.environ.get("GCL_POPRUN", os.path.join(BUILD, "bin", "poprun"))
PYTHON = os.environ.get("GCL_PYTHON", sys.executable)


def env(**extra):
    """The environment of a child: this one, with the checkout's packages importable."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(CHECKOUT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    for k, v in extra.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    return e


def run(cmd, timeout=120, **extra):
    """Runs CMD to completion; returns the CompletedProcess (text output)."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env(**extra))


def poprun(replicas, instances, args, timeout=120, poprun_args=(), **extra):
    """Runs ARGS under poprun with REPLICAS over INSTANCES."""
    cmd = [POPRUN, "--num-replicas", str(replicas), "--num-instances", str(instances),
           *poprun_args, *args]
    return run(cmd, timeout=timeout, **extra)


def by_instance(stdout):
    """{instance: [lines]} of poprun's tagged output."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("[instance "):
            tag, _, rest = line.partition("] ")
            out.setdefault(int(tag[len("[instance "):]), []).append(rest)
    return out


def wait_test(req, seconds=60):
    """Completes REQ with test() and short sleeps (bounded); returns its output."""
    deadline = time.monotonic() + seconds
    while not req.test():
        if time.monotonic() > deadline:
            raise AssertionError(f"request not complete after {seconds} s")
        time.sleep(0.0002)
    return req.wait()
