"""popdist: what a Python program needs to shard its work across a poprun job, with the names
of Graphcore's PopDist Python API.

The values come from the POPDIST_* variables that poprun sets for every instance, read by
libgcl's popdist_* functions (gcl/popdist.h), so a program sees what gcl.init sees. Without
poprun (isPopdistEnvSet() is False) they describe one instance holding one replica of one IPU;
a variable that is set but malformed reads as that default too (gcl.init rejects it loudly).

    import popdist
    shard = dataset[popdist.getInstanceIndex()::popdist.getNumInstances()]
"""

import os
import re

from gcl._lib import lib

_INT = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")

__all__ = [
    "isPopdistEnvSet", "getNumInstances", "getInstanceIndex", "getLocalInstanceIndex",
    "getNumTotalReplicas", "getNumLocalReplicas", "getReplicaIndexOffset",
    "getNumIpusPerReplica", "isUniformReplicasPerInstance",
]


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


def _env_int(name, lo, default):
    """NAME as an integer from LO, or DEFAULT when unset or malformed (libgcl's rule)."""
    v = os.environ.get(name)
    if v is None or not _INT.fullmatch(v):  # what strtol takes whole
        return default
    x = int(v)
    return x if lo <= x <= 2**31 - 1 else default
