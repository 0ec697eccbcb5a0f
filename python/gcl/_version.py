"""This package's version: libgcl's, set in one place, gcl/include/gcl/version.h. An installed
copy (pip install, or cmake --install) records it in _install.py; a copy imported from the
project's checkout reads the header beside it."""

import os
import re

_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gcl", "include",
                       "gcl", "version.h")


def _read():
    try:
        from . import _install  # written at install time
        return _install.VERSION
    except (ImportError, AttributeError):
        pass
    try:
        text = open(_HEADER, encoding="utf-8").read()
    except OSError:
        return "unknown"  # neither installed nor in a checkout: no claim to check
    parts = [re.search(rf"^#define GCL_VERSION_{p} +(\d+)", text, re.M) for p in
             ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else "unknown"


__version__ = _read()
