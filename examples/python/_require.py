"""What every Python example does first: make sure its interpreter has the modules it needs.

    from _require import require
    require("numpy", "gcl")          # before importing them

A python3 earlier on PATH than Debian's (pyenv, a virtualenv without --system-site-packages)
usually lacks Debian's python3-numpy and python3-torch. When this interpreter lacks one of the
modules and Debian's (/usr/bin/python3, or the interpreter GCL_PYTHON names) has them all, the
example runs again under it, saying so in one line on stderr:

    allreduce.py: /root/.pyenv/versions/3.11.7/bin/python3 has no numpy; running it with /usr/bin/python3

Otherwise it stops with one line naming the interpreter, the module and the fix, exit status 1.
gcl and popdist are taken from the checkout's python/ directory when they are not installed.
"""

import importlib.util
import os
import subprocess
import sys

_CHECKOUT_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
_FIX = {"numpy": "python3-numpy", "torch": "python3-torch"}


def _missing(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require(*modules):
    prog = os.path.basename(sys.argv[0]) or "python"
    if any(m in ("gcl", "popdist") for m in modules) and _missing(["gcl"]):
        sys.path.insert(0, os.path.abspath(_CHECKOUT_PY))  # a checkout without PYTHONPATH
    missing = _missing(modules)
    if not missing:
        return
    other = os.environ.get("GCL_PYTHON", "/usr/bin/python3")
    # A venv's python may be a link to Debian's, and still lack its packages: the paths differ.
    again = os.environ.get("GCL_REQUIRE_RERUN") == "1"  # this is already the re-run
    if not again and os.path.abspath(other) != os.path.abspath(sys.executable) and \
            os.access(other, os.X_OK):
        probe = "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in " \
                f"{list(modules)!r}))"
        env = dict(os.environ, GCL_REQUIRE_RERUN="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(_CHECKOUT_PY),
                                                        env.get("PYTHONPATH")) if p)
        if subprocess.run([other, "-c", probe], env=env, timeout=120).returncode == 0:
            print(f"{prog}: {sys.executable} has no {missing[0]}; running it with {other}",
                  file=sys.stderr, flush=True)
            os.execve(other, [other, os.path.abspath(sys.argv[0])] + sys.argv[1:], env)
    debs = [_FIX[m] for m in missing if m in _FIX]
    fix = (f"run it with Debian's /usr/bin/python3 (apt-get install {' '.join(debs)}, as "
           "scripts/setup does), or a venv made from it with --system-site-packages" if debs else
           "install the package (pip install ./python) or set PYTHONPATH to the checkout's "
           "python/ directory")
    sys.exit(f"{prog}: {sys.executable} has no {', '.join(missing)}: {fix}")
