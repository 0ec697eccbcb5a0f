"""`cmake --install` puts the packages under the prefix, and the installed gcl finds the
prefix's libgcl (when the build installs libgcl there) without PYTHONPATH tricks or
GCL_LIBRARY."""

import os
import subprocess

import pytest

from helpers import PYTHON

BUILD = os.environ.get("GCL_CMAKE_BINARY_DIR")
CMAKE = os.environ.get("GCL_CMAKE", "cmake")
PYDIR = os.environ.get("GCL_PYTHON_INSTALL_DIR")


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if not BUILD or not PYDIR:
        pytest.skip("needs GCL_CMAKE_BINARY_DIR and GCL_PYTHON_INSTALL_DIR (set by ctest)")
    p = tmp_path_factory.mktemp("prefix")
    r = subprocess.run([CMAKE, "--install", BUILD, "--prefix", str(p)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return p


def test_packages_and_library_record_are_installed(prefix):
    site = prefix / PYDIR
    for f in ("gcl/__init__.py", "gcl/_lib.py", "gcl/_comm.py", "popdist/__init__.py"):
        assert (site / f).is_file(), f
    assert not list(site.rglob("__pycache__"))
    record = {}
    exec((site / "gcl" / "_install.py").read_text(), record)
    assert record["LIBRARIES"][0].startswith(str(prefix) + "/")
    assert all(p.endswith("/libgcl.so.0") for p in record["LIBRARIES"])


def test_installed_package_imports_from_the_prefix(prefix):
    site = prefix / PYDIR
    record = {}
    exec((site / "gcl" / "_install.py").read_text(), record)
    installed = [p for p in record["LIBRARIES"] if os.path.exists(p)]
    if not installed:
        pytest.skip("this build installs no libgcl under the prefix")
    env = {k: v for k, v in os.environ.items() if k not in ("GCL_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    code = ("import gcl, numpy as np; print(gcl.library_path, gcl.__file__); "
            "print(gcl.init(replicas=2).run(lambda c: int(c.comm().all_reduce(np.ones(1, "
            "np.int32))[0])))")
    r = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                       cwd="/")
    assert r.returncode == 0, r.stderr
    lib, init = r.stdout.splitlines()[0].split()
    assert lib == installed[0] and init.startswith(str(site))
    assert r.stdout.splitlines()[1] == "[2, 2]"
