"""setuptools' part of `pip install ./python` (see pyproject.toml): the version, read from
libgcl's header (gcl/include/gcl/version.h, the one place it is set), and a record of it
written into the installed package (gcl/_install.py), so that an installed gcl knows its
version without the header. Build files go to temporary directories, not into the checkout,
and are removed when this process exits (pip runs setup.py once for each step, and what a step
makes that pip keeps, the metadata and the wheel, it writes to directories of its own)."""

import atexit
import os
import re
import shutil
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.egg_info import egg_info

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "gcl", "include", "gcl", "version.h")


def version():
    try:
        text = open(HEADER, encoding="utf-8").read()
    except OSError as e:
        sys.exit(f"gcl: cannot read libgcl's version from {HEADER}: {e.strerror} (build the "
                 "package from the project's checkout: pip install ./python)")
    parts = [re.search(rf"^#define GCL_VERSION_{p} +(\d+)", text, re.M) for p in
             ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        sys.exit(f"gcl: {HEADER} has no GCL_VERSION_MAJOR/MINOR/PATCH")
    return ".".join(m.group(1) for m in parts)


RECORD = '''"""Written by pip install (python/setup.py): this package's version, and where the libgcl
of its install prefix would be."""
import os as _os
import sys as _sys
VERSION = "{version}"
LIBRARIES = [_os.path.join(_sys.prefix, "lib", "libgcl.so.0")]
'''


class BuildPy(build_py):
    """Also writes gcl/_install.py into the build (never into the checkout)."""

    def run(self):
        super().run()
        path = os.path.join(self.build_lib, "gcl", "_install.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(RECORD.format(version=version()))


def scratch(prefix):
    """A temporary directory that is removed when this process exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


class EggInfo(egg_info):
    """Keeps the egg-info out of the checkout."""

    def initialize_options(self):
        super().initialize_options()
        self.egg_base = scratch("gcl-egg-info-")


setup(version=version(),
      cmdclass={"build_py": BuildPy, "egg_info": EggInfo},
      options={"build": {"build_base": scratch("gcl-build-")}})
