"""`pip install ./python` as the README has it: offline, into a venv made with
`python3 -m venv --system-site-packages` from Debian's interpreter (its numpy), with Debian's
setuptools as the build backend; then an all_reduce under poprun with the venv's python, the
library it loads (poprun's), and its version: one version everywhere, and a library of another
version refused in one line."""

import os
import re
import subprocess
import sys

import pytest

from helpers import CHECKOUT, POPRUN, PYTHON, by_instance, env, run

HEADER = os.path.join(CHECKOUT, "gcl", "include", "gcl", "version.h")


def header_version():
    text = open(HEADER, encoding="utf-8").read()
    return ".".join(re.search(rf"^#define GCL_VERSION_{p} +(\d+)", text, re.M).group(1)
                    for p in ("MAJOR", "MINOR", "PATCH"))


def clean_env(**extra):
    """This environment without the checkout on PYTHONPATH, GCL_LIBRARY or any pip setting;
    pip may use no index at all (PIP_NO_INDEX), so anything it would download fails."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("PIP_") and k not in ("PYTHONPATH", "GCL_LIBRARY", "GCL_BUILD_DIR")}
    e.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    e.update({k: str(v) for k, v in extra.items()})
    return e


def tree(path):
    """Every file under PATH but __pycache__, relative."""
    out = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out |= {os.path.relpath(os.path.join(root, f), path) for f in files}
    return out


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    d = tmp_path_factory.mktemp("venv") / "v"
    r = subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(d)],
                       capture_output=True, text=True, timeout=120, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    before = tree(os.path.join(CHECKOUT, "python"))
    r = subprocess.run([str(d / "bin" / "pip"), "install", os.path.join(CHECKOUT, "python")],
                       capture_output=True, text=True, timeout=300, env=clean_env(),
                       cwd=str(d))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Successfully installed gcl-" + header_version() in r.stdout, r.stdout
    # The build leaves nothing in the checkout.
    assert tree(os.path.join(CHECKOUT, "python")) == before
    return d


def test_installed_package_runs_an_all_reduce_under_poprun(venv, tmp_path):
    py = str(venv / "bin" / "python")
    prog = os.path.join(CHECKOUT, "examples", "python", "allreduce.py")
    r = subprocess.run([POPRUN, "--num-replicas", "4", "--num-instances", "2", py, prog],
                       capture_output=True, text=True, timeout=120, env=clean_env(),
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert by_instance(r.stdout) == {0: ["replica 0: [6. 6. 6. 6.]", "replica 1: [6. 6. 6. 6.]"],
                                     1: ["replica 2: [6. 6. 6. 6.]", "replica 3: [6. 6. 6. 6.]"]}


def test_installed_package_loads_the_library_of_its_poprun(venv, tmp_path):
    code = ("import gcl, importlib.metadata as m; print(gcl.__version__, m.version('gcl'), "
            "gcl.__file__.startswith(%r), gcl.library_path, gcl.library_source)" % str(venv))
    r = subprocess.run([POPRUN, "--num-replicas", "2", "--num-instances", "2",
                        str(venv / "bin" / "python"), "-c", code], capture_output=True,
                       text=True, timeout=120, env=clean_env(), cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    lib = os.path.join(os.path.dirname(POPRUN), "..", "lib", "libgcl.so.0")
    v = header_version()
    want = f"{v} {v} True {lib} the library of the poprun that runs this program"
    assert by_instance(r.stdout) == {0: [want], 1: [want]}


def test_installed_package_without_a_library_says_where_it_looked(venv, tmp_path):
    r = subprocess.run([str(venv / "bin" / "python"), "-c", "import gcl"], capture_output=True,
                       text=True, timeout=60, env=clean_env(), cwd=str(tmp_path))
    assert r.returncode == 1
    assert "ImportError: gcl: cannot find libgcl" in r.stderr
    assert f"{venv}/lib/libgcl.so.0 (the library of this package's install prefix)" in r.stderr


def test_one_version_for_the_package_the_library_poprun_and_cmake():
    v = header_version()
    build = os.environ.get("GCL_BUILD_DIR", os.path.join(CHECKOUT, "build"))
    cfg = open(os.path.join(build, "gcl", "gclConfigVersion.cmake"), encoding="utf-8").read()
    assert re.search(r'^set\(PACKAGE_VERSION "([^"]+)"\)', cfg, re.M).group(1) == v
    pc = open(os.path.join(build, "gcl", "gcl.pc"), encoding="utf-8").read()
    assert re.search(r"^Version: (.*)$", pc, re.M).group(1) == v
    r = run([PYTHON, "-c", "import gcl; print(gcl.__version__, "
             "gcl._lib.lib.gcl_version_string().decode())"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [v, v]
    r = subprocess.run([POPRUN, "--version"], capture_output=True, text=True, timeout=30)
    assert r.stdout.split()[:2] == ["poprun", v], r.stdout


def test_checkout_under_poprun_takes_the_library_of_that_poprun():
    code = "import gcl; print(gcl.library_source)"
    r = subprocess.run([POPRUN, "--num-replicas", "1", PYTHON, "-c", code], capture_output=True,
                       text=True, timeout=60, env={k: v for k, v in env().items()
                                                   if k not in ("GCL_LIBRARY", "GCL_BUILD_DIR")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert by_instance(r.stdout) == {0: ["the library of the poprun that runs this program"]}


def test_a_library_of_another_version_is_one_clear_error(tmp_path):
    cc = os.environ.get("CC", "cc")
    src = tmp_path / "other.c"
    src.write_text('const char *gcl_version_string(void) { return "9.8.7"; }\n')
    so = tmp_path / "libgcl.so.0"
    r = subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"no C compiler: {r.stderr}")
    r = run([PYTHON, "-c", "import gcl"], GCL_LIBRARY=so)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    v = header_version()
    assert last == (f"ImportError: gcl {v} cannot use {so} (GCL_LIBRARY): it is libgcl 9.8.7; "
                    f"set GCL_LIBRARY to a libgcl {v}, or install this package from that "
                    f"library's own build"), last
    # Under poprun, a poprun whose library is another version's: refused the same way.
    r = run([PYTHON, "-c", "import gcl"], GCL_LIBRARY=None, POPRUN_LIBGCL=so,
            POPDIST_NUM_TOTAL_REPLICAS=1)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1].startswith(
        f"ImportError: gcl {v} cannot use {so} (the library of the poprun that runs this "
        "program): it is libgcl 9.8.7"), r.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
