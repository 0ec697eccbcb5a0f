"""poprun --num-replicas 4 --num-instances 2 /usr/bin/python3 examples/python/allreduce.py"""
from _require import require
require("numpy", "gcl")                            # or re-run under Debian's python3

import numpy as np
import gcl

def program(ctx):                                  # runs on every simulated IPU of this instance
    x = np.full(4, ctx.replica, np.float32)        # replica r holds [r, r, r, r]
    ctx.comm().all_reduce(x, op="sum")             # in place, over all replicas of the job
    return f"replica {ctx.replica}: {x}"           # 0 + 1 + ... + (n-1) on every replica

with gcl.init(replicas=4) as inst:                 # under poprun, POPDIST_* win over replicas=4
    print("\n".join(inst.run(program)))            # run() returns each local IPU's result
