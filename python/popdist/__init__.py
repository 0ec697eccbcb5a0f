"""popdist: what a Python program needs to shard its work across a poprun job, with the names
of Graphcore's PopDist Python API.

The values come from the POPDIST_* variables that poprun sets for every instance, read by
libgcl's popdist_* functions (gcl/popdist.h), so a program sees what gcl.init sees. Without
poprun (isPopdistEnvSet() is False) they describe one instance holding one replica of one IPU;
a variable that is set but malformed reads as that default too (gcl.init rejects it loudly).

    import popdist
    popdist.init()                       # checks what poprun set; nothing to do without poprun
    shard = dataset[popdist.getInstanceIndex()::popdist.getNumInstances()]
    popdist.execute_on_instances({0}, save_checkpoint, model)   # on instance 0 only
"""

import os
import re

from gcl._lib import lib

_INT = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")

__all__ = [
    "init", "execute_on_instances", "isPopdistEnvSet", "getNumInstances", "getInstanceIndex",
    "getLocalInstanceIndex", "getNumTotalReplicas", "getNumLocalReplicas",
    "getReplicaIndexOffset", "getNumIpusPerReplica", "isUniformReplicasPerInstance",
    "getDeviceId",
]


def init():
    """Readies this process for a poprun job, as PopDist's init() does before a program reads
    its shard: checks the POPDIST_* variables poprun set, and raises ValueError with one line
    naming the variable when they do not describe this instance's part of a job (the check
    gcl.init makes). Calling it again does nothing more; without poprun it does nothing."""
    if not isPopdistEnvSet():
        return
    why = _env_problem()
    if why:
        raise ValueError(f"popdist.init: {why}")


def execute_on_instances(instances, fn, *args, **kwargs):
    """Calls fn(*args, **kwargs) on the instances whose index is in INSTANCES (a set or any
    iterable of indices) and returns its result there; returns None on the others, without
    calling fn. The instances are not synchronised: the others go on at once (a collective
    afterwards makes them wait). An index outside the job is a ValueError, raised on every
    instance alike."""
    try:
        wanted = {int(i) for i in instances}
    except TypeError:
        raise TypeError("popdist.execute_on_instances: instances must be a set of instance "
                        f"indices, not {type(instances).__name__}") from None
    n = getNumInstances()
    bad = sorted(i for i in wanted if not 0 <= i < n)
    if bad:
        raise ValueError(f"popdist.execute_on_instances: instance{'s' if len(bad) > 1 else ''} "
                         f"{', '.join(map(str, bad))} not in this job of {n} instance"
                         f"{'s' if n > 1 else ''} (0 to {n - 1})")
    if not callable(fn):
        raise TypeError(f"popdist.execute_on_instances: {fn!r} is not callable")
    return fn(*args, **kwargs) if getInstanceIndex() in wanted else None


def isPopdistEnvSet():
    """True when this process was started by poprun (POPDIST_NUM_INSTANCES is set)."""
    return bool(lib.popdist_is_set())


def getNumInstances():
    """The number of instances (processes) in the job."""
    return lib.popdist_num_instances()


def getInstanceIndex():
    """This instance's index, in [0, getNumInstances())."""
    return lib.popdist_instance_index()


def getLocalInstanceIndex():
    """This instance's index among the instances on its host (POPDIST_LOCAL_INSTANCE_INDEX;
    0 without poprun or when malformed, as libgcl reads the other variables)."""
    return _env_int("POPDIST_LOCAL_INSTANCE_INDEX", 0, 0)


def getNumTotalReplicas():
    """The number of replicas in the whole job."""
    return lib.popdist_num_total_replicas()


def getNumLocalReplicas():
    """The number of replicas this instance hosts."""
    return lib.popdist_num_local_replicas()


def getReplicaIndexOffset():
    """The global index of this instance's first replica."""
    return lib.popdist_replica_index_offset()


def getNumIpusPerReplica():
    """The number of simulated IPUs of each replica."""
    return lib.popdist_num_ipus_per_replica()


def isUniformReplicasPerInstance():
    """True when every instance hosts the same number of replicas (always, under poprun; and
    alone, with one instance)."""
    return _env_int("POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", 0, 1) == 1


def getDeviceId(ipus_per_replica=None):
    """The ID of the multi-IPU device that holds this instance's IPUs, as PopDist gives it to
    attach to (gc-info's numbering of a partition of the job's IPUs rounded up to a power of
    two: single IPUs 0 to N-1, then the N/2 pairs, then the fours, ...). Each instance's
    device spans its local replicas' IPUs, getNumLocalReplicas() x IPUS_PER_REPLICA (default
    getNumIpusPerReplica()), rounded up to a power of two. Simulated IPUs attach to nothing;
    the number says which IPUs of the pod are this instance's."""
    ipr = getNumIpusPerReplica() if ipus_per_replica is None else ipus_per_replica
    if isinstance(ipr, bool) or not isinstance(ipr, int) or ipr < 1:
        raise ValueError(f"popdist.getDeviceId: ipus_per_replica must be a positive integer, "
                         f"not {ipus_per_replica!r}")
    size = _pow2(getNumLocalReplicas() * ipr)
    total = _pow2(getNumTotalReplicas() * ipr)
    first = getReplicaIndexOffset() * ipr
    base, width = 0, 1
    while width < size:  # the IDs of every smaller device size come first
        base += total // width
        width *= 2
    return base + first // size


def _pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def _env_problem():
    """Why the POPDIST_* variables do not describe a part of a job, or None."""
    names = ("POPDIST_NUM_TOTAL_REPLICAS", "POPDIST_NUM_LOCAL_REPLICAS",
             "POPDIST_REPLICA_INDEX_OFFSET", "POPDIST_NUM_IPUS_PER_REPLICA",
             "POPDIST_NUM_INSTANCES", "POPDIST_INSTANCE_INDEX", "POPDIST_LOCAL_INSTANCE_INDEX")
    for name in names:
        v = os.environ.get(name)
        lo = 0 if name in ("POPDIST_REPLICA_INDEX_OFFSET", "POPDIST_INSTANCE_INDEX",
                           "POPDIST_LOCAL_INSTANCE_INDEX") else 1
        if v is not None and (not _INT.fullmatch(v) or not lo <= int(v) <= 2**31 - 1):
            return f"{name}={v!r} is not an integer from {lo}"
    total, local = getNumTotalReplicas(), getNumLocalReplicas()
    offset, n, i = getReplicaIndexOffset(), getNumInstances(), getInstanceIndex()
    if total % local:
        return (f"POPDIST_NUM_TOTAL_REPLICAS={total} is not a multiple of "
                f"POPDIST_NUM_LOCAL_REPLICAS={local}")
    if offset % local or offset >= total:
        return (f"POPDIST_REPLICA_INDEX_OFFSET={offset} is not the first replica of an "
                f"instance ({total} replicas in blocks of {local})")
    if n * local != total or i >= n:
        return (f"POPDIST_NUM_INSTANCES={n} and POPDIST_INSTANCE_INDEX={i} do not match "
                f"{total} replicas in blocks of {local}")
    return None


def _env_int(name, lo, default):
    """NAME as an integer from LO, or DEFAULT when unset or malformed (libgcl's rule)."""
    v = os.environ.get(name)
    if v is None or not _INT.fullmatch(v):  # what strtol takes whole
        return default
    x = int(v)
    return x if lo <= x <= 2**31 - 1 else default
