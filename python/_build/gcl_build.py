"""The PEP 517 build backend of the gcl package: Debian's setuptools and wheel.

pip builds in an isolated environment that sees none of the system's packages, and would
download the backend a pyproject names; here nothing can be downloaded. So pyproject.toml names
no requirement and this shim as the backend: it makes Debian's setuptools and wheel
(python3-setuptools and python3-wheel, from /usr/lib/python3/dist-packages) importable and hands
every hook to setuptools.build_meta. get_requires_* answer [] because what setuptools would ask
for (wheel) is already here.
"""

import os
import sys

DEBIAN = "/usr/lib/python3/dist-packages"


def _debian_backend():
    try:
        import setuptools  # noqa: F401  (pip --no-build-isolation, or a venv that has it)
        import wheel  # noqa: F401
    except ImportError:
        missing = [m for m in ("setuptools", "wheel") if not os.path.isdir(os.path.join(DEBIAN, m))]
        if missing:
            raise ImportError(
                "gcl's build backend is Debian's setuptools and wheel: install "
                + " and ".join("python3-" + m for m in missing)
                + " (scripts/setup does), then run pip install ./python again") from None
        sys.path.append(DEBIAN)
    from setuptools import build_meta
    return build_meta


_backend = _debian_backend()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


prepare_metadata_for_build_wheel = _backend.prepare_metadata_for_build_wheel
build_wheel = _backend.build_wheel
build_sdist = _backend.build_sdist
if hasattr(_backend, "build_editable"):
    build_editable = _backend.build_editable
    prepare_metadata_for_build_editable = _backend.prepare_metadata_for_build_editable
