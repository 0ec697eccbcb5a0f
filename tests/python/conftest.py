"""Shared fixtures. One gcl instance per pytest session: under poprun every instance runs the
same tests in the same order, so their runs (collective over the instances) line up; alone it
hosts GCL_TEST_REPLICAS replicas (default 4) of GCL_TEST_IPUS_PER_REPLICA IPUs (default 1)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # refs.py, helpers.py

import gcl  # noqa: E402


@pytest.fixture(scope="session")
def inst():
    replicas = int(os.environ.get("GCL_TEST_REPLICAS", "4"))
    ipr = int(os.environ.get("GCL_TEST_IPUS_PER_REPLICA", "1"))
    with gcl.init(replicas=replicas, ipus_per_replica=ipr) as instance:
        yield instance
