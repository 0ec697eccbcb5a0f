"""Finding and loading libgcl, and the ctypes prototypes of its public API (gcl/include/gcl/*.h).

The library is looked for, in order:
  1. the file that GCL_LIBRARY names (nothing else is tried when it is set);
  2. the libgcl of this package's install prefix (recorded in _install.py by pip install or
     cmake --install);
  3. under poprun, the libgcl of the poprun that runs this program (POPRUN_LIBGCL, which
     poprun's instance wrapper sets to the library installed or built beside it);
  4. in the project's checkout (PYTHONPATH=python), its build: build/lib/libgcl.so, or that of
     GCL_BUILD_DIR (relative to the checkout unless absolute);
  5. libgcl.so.0 on the dynamic loader's path.
A candidate whose file does not exist is skipped; the first that exists is loaded, and its
version must be this package's (gcl/include/gcl/version.h): another is one ImportError that
names both, never a silent use of another build's library.

Every call through a ctypes.CDLL releases the GIL for its duration, so IPU threads blocked in a
collective let the others run Python.
"""

import ctypes
import os
import signal
import threading

from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint,
                    c_void_p)

from ._version import __version__ as VERSION

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(os.path.dirname(_HERE))


def _in_checkout():
    """Whether this package is the python/gcl of the project's checkout, not an installed copy."""
    try:
        from . import _install  # noqa: F401
        return False
    except ImportError:
        return os.path.isfile(os.path.join(_CHECKOUT, "gcl", "include", "gcl", "version.h"))


def _candidates():
    """(path, why) pairs to try, in order (see the module's doc)."""
    out = []
    try:
        from . import _install  # written by pip install or cmake --install
        out += [(p, "the library of this package's install prefix") for p in _install.LIBRARIES]
    except ImportError:
        pass
    poprun_lib = os.environ.get("POPRUN_LIBGCL")
    if poprun_lib and os.environ.get("POPDIST_NUM_TOTAL_REPLICAS"):
        out.append((poprun_lib, "the library of the poprun that runs this program"))
    build = os.environ.get("GCL_BUILD_DIR")
    if build or _in_checkout():
        build = build or "build"
        if not os.path.isabs(build):
            build = os.path.join(_CHECKOUT, build)
        out.append((os.path.join(build, "lib", "libgcl.so"), "the build of this checkout"))
    out.append(("libgcl.so.0", "the dynamic loader's path"))
    return out


def _load():
    # libinfinipath (which libfabric's psm provider pulls in with libgcl) installs handlers for
    # SIGINT, SIGTERM, SIGSEGV and others when it is loaded; they end the process with status 1,
    # so Ctrl-C would no longer reach Python. Its own switch turns them off; Python's SIGINT
    # handler is put back afterwards in any case.
    os.environ.setdefault("IPATH_NO_BACKTRACE", "1")
    try:
        found = _open()
    finally:
        _restore_sigint()
    return found


def _restore_sigint():
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def _open():
    # Open MPI loads its components with dlopen, and they need libmpi's symbols: load libgcl
    # (and with it libmpi) with RTLD_GLOBAL, as mpi4py does.
    mode = ctypes.RTLD_GLOBAL
    named = os.environ.get("GCL_LIBRARY")
    if named:
        try:
            return _checked(ctypes.CDLL(named, mode=mode), named, "GCL_LIBRARY")
        except OSError as e:
            raise ImportError(f"gcl: cannot load GCL_LIBRARY={named}: {e}") from None
    tried = []
    for path, why in _candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append(f"{path} ({why}): no such file")
            continue
        try:
            return _checked(ctypes.CDLL(path, mode=mode), path, why)
        except OSError as e:
            tried.append(f"{path} ({why}): {e}")
    raise ImportError("gcl: cannot find libgcl; build it (cmake --build build) or set "
                      "GCL_LIBRARY to its path. Tried:\n  " + "\n  ".join(tried))


def _checked(handle, path, why):
    """(HANDLE, PATH, WHY) when the library's version is this package's; else ImportError."""
    handle.gcl_version_string.restype = c_char_p
    handle.gcl_version_string.argtypes = []
    have = (handle.gcl_version_string() or b"?").decode(errors="replace")
    if VERSION != "unknown" and have != VERSION:
        raise ImportError(f"gcl {VERSION} cannot use {path} ({why}): it is libgcl {have}; set "
                          f"GCL_LIBRARY to a libgcl {VERSION}, or install this package from "
                          f"that library's own build")
    return handle, path, why


lib, path, source = _load()


class Group(Structure):
    """gcl_group_t, passed by value."""
    _fields_ = [("kind", c_int), ("size", c_int)]


class JobInfo(Structure):
    """gcl_job_info_t."""
    _fields_ = [(name, c_int) for name in (
        "num_instances", "instance_index", "num_replicas", "num_local_replicas",
        "replica_offset", "ipus_per_replica", "num_hosts", "host_index")]


class ElasticInfo(Structure):
    """gcl_elastic_info_t (gcl/elastic.h)."""
    _fields_ = [(name, c_int) for name in (
        "epoch", "num_instances", "instance_index", "num_replicas", "replica_offset",
        "num_local_replicas", "initial_instances", "initial_replicas", "min_replicas", "slot",
        "joined", "num_lost", "num_joined")] + [("lost", c_int * 64), ("joined_slots", c_int * 64)]


class Config(Structure):
    """gcl_config_t (gcl.h): size and version say which header this layout follows."""
    _fields_ = [("num_replicas", c_int), ("ipus_per_replica", c_int), ("size", c_size_t),
                ("version", c_uint), ("phantom", c_int), ("topology", c_char_p),
                ("log_level", c_int), ("mpi_world", c_int)]


class SimStats(Structure):
    """gcl_sim_stats_t."""
    _fields_ = [("total_s", c_double), ("compute_s", c_double), ("exchange_s", c_double),
                ("sync_s", c_double), ("idle_s", c_double), ("memory_used", c_size_t),
                ("memory_peak", c_size_t), ("memory_capacity", c_size_t),
                ("host_wait_s", c_double)]


PROGRAM = CFUNCTYPE(c_int, c_void_p, c_void_p)

_st = c_int  # gcl_status_t
_p = c_void_p
_sz = c_size_t
_PROTOS = {
    "gcl_status_string": (c_char_p, [c_int]),
    "gcl_status_name": (c_char_p, [c_int]),
    "gcl_dtype_size": (c_size_t, [c_int]),
    "gcl_dtype_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "gcl_redop_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "gcl_redop_check": (c_int, [c_int, c_int, POINTER(c_char_p)]),
    "gcl_init": (_st, [POINTER(Config), POINTER(_p)]),
    "gcl_init_error": (c_char_p, []),
    "gcl_version": (c_int, []),
    "gcl_version_string": (c_char_p, []),
    "gcl_finalize": (_st, [_p]),
    "gcl_run": (_st, [_p, PROGRAM, _p]),
    "gcl_instance_error": (c_char_p, [_p]),
    "gcl_instance_info": (None, [_p, POINTER(JobInfo)]),
    "gcl_elastic_enabled": (c_int, [_p]),
    "gcl_elastic_info": (_st, [_p, POINTER(ElasticInfo)]),
    "gcl_elastic_resize": (_st, [_p, POINTER(ElasticInfo)]),
    "gcl_elastic_pending": (c_int, [_p]),
    "gcl_ctx_replica": (c_int, [_p]),
    "gcl_ctx_ipu": (c_int, [_p]),
    "gcl_ctx_global_ipu": (c_int, [_p]),
    "gcl_ctx_num_replicas": (c_int, [_p]),
    "gcl_comm_create": (_st, [_p, Group, POINTER(_p)]),
    "gcl_comm_destroy": (None, [_p]),
    "gcl_comm_rank": (c_int, [_p]),
    "gcl_comm_size": (c_int, [_p]),
    "gcl_last_error": (c_char_p, [_p]),
    "gcl_ctx_last_error": (c_char_p, [_p]),
    "gcl_ctx_set_error": (_st, [_p, c_int, c_char_p]),  # and the sentence, for "%s"
    "gcl_algorithms": (c_int, [c_char_p, POINTER(c_char_p), c_int]),
    "gcl_comm_algorithm": (c_char_p, [_p, c_char_p]),
    "gcl_comm_set_algorithm": (_st, [_p, c_char_p, c_char_p]),
    "gcl_all_reduce": (_st, [_p, _p, _p, _sz, c_int, c_int]),
    "gcl_reduce_scatter": (_st, [_p, _p, _p, _sz, c_int, c_int]),
    "gcl_all_gather": (_st, [_p, _p, _p, _sz, c_int]),
    "gcl_broadcast": (_st, [_p, _p, _p, _sz, c_int, c_int]),
    "gcl_all_to_all": (_st, [_p, _p, _p, _sz, c_int]),
    "gcl_barrier": (_st, [_p]),
    "gcl_all_reduce_start": (_st, [_p, _p, _p, _sz, c_int, c_int, POINTER(_p)]),
    "gcl_reduce_scatter_start": (_st, [_p, _p, _p, _sz, c_int, c_int, POINTER(_p)]),
    "gcl_all_gather_start": (_st, [_p, _p, _p, _sz, c_int, POINTER(_p)]),
    "gcl_broadcast_start": (_st, [_p, _p, _p, _sz, c_int, c_int, POINTER(_p)]),
    "gcl_all_to_all_start": (_st, [_p, _p, _p, _sz, c_int, POINTER(_p)]),
    "gcl_barrier_start": (_st, [_p, POINTER(_p)]),
    "gcl_wait": (_st, [_p]),
    "gcl_test": (_st, [_p, POINTER(c_int)]),
    "gcl_send": (_st, [_p, c_int, _p, _sz, c_int, c_int]),
    "gcl_recv": (_st, [_p, c_int, _p, _sz, c_int, c_int]),
    "gcl_send_start": (_st, [_p, c_int, _p, _sz, c_int, c_int, POINTER(_p)]),
    "gcl_recv_start": (_st, [_p, c_int, _p, _sz, c_int, c_int, POINTER(_p)]),
    "gcl_ipu_malloc": (_st, [_p, _sz, c_char_p, POINTER(_p)]),
    "gcl_ipu_free": (None, [_p, _p]),
    "gcl_charge_compute": (_st, [_p, c_char_p, c_double, c_double, c_int]),
    "gcl_sim_host_exchange": (_st, [_p]),
    "gcl_sim_time": (c_double, [_p]),
    "gcl_sim_stats": (None, [_p, POINTER(SimStats)]),
    "gcl_sim_topology": (c_char_p, [_p]),
    "gcl_sim_topology_ipus": (c_int, [_p]),
    "popdist_is_set": (c_int, []),
    "popdist_num_instances": (c_int, []),
    "popdist_instance_index": (c_int, []),
    "popdist_replica_index_offset": (c_int, []),
    "popdist_num_local_replicas": (c_int, []),
    "popdist_num_total_replicas": (c_int, []),
    "popdist_num_ipus_per_replica": (c_int, []),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def text(raw):
    """A C string from libgcl as str ("" for NULL)."""
    return raw.decode("utf-8", "replace") if raw else ""
