"""Finding and loading libgcl, and the ctypes prototypes of its public API (gcl/include/gcl/*.h).

The library is looked for, in order:
  1. the file that GCL_LIBRARY names (nothing else is tried when it is set);
  2. the library `cmake --install` put next to this package (recorded in _install.py);
  3. build/lib/libgcl.so of the checkout this package sits in (python/gcl -> ../../build), or of
     GCL_BUILD_DIR when that is set (relative to the checkout unless absolute);
  4. libgcl.so.0 on the dynamic loader's path.

Every call through a ctypes.CDLL releases the GIL for its duration, so IPU threads blocked in a
collective let the others run Python.
"""

import ctypes
import os
import signal
import threading

from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint,
                    c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(os.path.dirname(_HERE))


def _candidates():
    """(path, why) pairs to try, in order."""
    out = []
    try:
        from . import _install  # written by `cmake --install`
        out += [(p, "installed with this package") for p in _install.LIBRARIES]
    except ImportError:
        pass
    build = os.environ.get("GCL_BUILD_DIR", "build")
    if not os.path.isabs(build):
        build = os.path.join(_CHECKOUT, build)
    out.append((os.path.join(build, "lib", "libgcl.so"), "the checkout's build"))
    out.append(("libgcl.so.0", "the dynamic loader's path"))
    return out


def _load():
    # libinfinipath (which libfabric's psm provider pulls in with libgcl) installs handlers for
    # SIGINT, SIGTERM, SIGSEGV and others when it is loaded; they end the process with status 1,
    # so Ctrl-C would no longer reach Python. Its own switch turns them off; Python's SIGINT
    # handler is put back afterwards in any case.
    os.environ.setdefault("IPATH_NO_BACKTRACE", "1")
    try:
        lib, where = _open()
    finally:
        _restore_sigint()
    return lib, where


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
            return ctypes.CDLL(named, mode=mode), named
        except OSError as e:
            raise ImportError(f"gcl: cannot load GCL_LIBRARY={named}: {e}") from None
    tried = []
    for path, why in _candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append(f"{path} ({why}): no such file")
            continue
        try:
            return ctypes.CDLL(path, mode=mode), path
        except OSError as e:
            tried.append(f"{path} ({why}): {e}")
    raise ImportError("gcl: cannot find libgcl; build it (cmake --build build) or set "
                      "GCL_LIBRARY to its path. Tried:\n  " + "\n  ".join(tried))


lib, path = _load()


class Group(Structure):
    """gcl_group_t, passed by value."""
    _fields_ = [("kind", c_int), ("size", c_int)]


class JobInfo(Structure):
    """gcl_job_info_t."""
    _fields_ = [(name, c_int) for name in (
        "num_instances", "instance_index", "num_replicas", "num_local_replicas",
        "replica_offset", "ipus_per_replica", "num_hosts", "host_index")]


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
    "gcl_finalize": (_st, [_p]),
    "gcl_run": (_st, [_p, PROGRAM, _p]),
    "gcl_instance_error": (c_char_p, [_p]),
    "gcl_instance_info": (None, [_p, POINTER(JobInfo)]),
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
