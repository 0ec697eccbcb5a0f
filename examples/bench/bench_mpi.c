/*
 * gcl-bench --compare mpi-in-job: the matching MPI collective on the same buffers, in the same
 * run, with one replica per instance (so one MPI rank per replica). MPI is already initialised
 * by gcl_init, shares the process with libgcl's threads and runs under poprun's mpirun options
 * (--bind-to none): a check on the same buffers, slower than MPI in a job of its own. The fair
 * comparison is scripts/bench-collectives --peers (examples/bench/peers/).
 */
#include <mpi.h>
#include <string.h>

#include "bench.h"
#include "common/ref.h"

static MPI_Datatype mpi_type(gcl_dtype_t t)
{
    switch (t) {
    case GCL_F32:
        return MPI_FLOAT;
    case GCL_I32:
        return MPI_INT32_T;
    case GCL_I64:
        return MPI_INT64_T;
    case GCL_U32:
        return MPI_UINT32_T;
    case GCL_U64:
        return MPI_UINT64_T;
    default:
        return MPI_DATATYPE_NULL; /* no f16, bf16 or one-byte bool in MPI */
    }
}

static MPI_Op mpi_op(gcl_redop_t op)
{
    switch (op) {
    case GCL_SUM:
        return MPI_SUM;
    case GCL_MUL:
        return MPI_PROD;
    case GCL_MIN:
        return MPI_MIN;
    case GCL_MAX:
        return MPI_MAX;
    case GCL_LOGICAL_AND:
        return MPI_LAND;
    case GCL_LOGICAL_OR:
        return MPI_LOR;
    default:
        return MPI_OP_NULL;
    }
}

static int run(const bench_opts_t *o, const void *send, void *recv, int count, MPI_Datatype t,
               MPI_Op op)
{
    switch (ref_collective(o->collective)) {
    case REF_ALL_REDUCE:
        return MPI_Allreduce(send, recv, count, t, op, MPI_COMM_WORLD);
    case REF_REDUCE_SCATTER:
        return MPI_Reduce_scatter_block(send, recv, count, t, op, MPI_COMM_WORLD);
    case REF_ALL_GATHER:
        return MPI_Allgather(send, count, t, recv, count, t, MPI_COMM_WORLD);
    case REF_BROADCAST: {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == o->root)
            memcpy(recv, send, (size_t)count * gcl_dtype_size(o->type));
        return MPI_Bcast(recv, count, t, o->root, MPI_COMM_WORLD);
    }
    case REF_ALL_TO_ALL:
        return MPI_Alltoall(send, count, t, recv, count, t, MPI_COMM_WORLD);
    default:
        return MPI_Barrier(MPI_COMM_WORLD);
    }
}

double bench_mpi_time(const bench_opts_t *o, const void *send, void *recv, size_t count)
{
    int reducing = ref_collective(o->collective) <= REF_REDUCE_SCATTER;
    MPI_Datatype t = mpi_type(o->type);
    MPI_Op op = mpi_op(o->op);
    if (t == MPI_DATATYPE_NULL || (reducing && op == MPI_OP_NULL) || count > 0x7fffffff)
        return -1;
    for (long i = 0; i < o->warmup; i++)
        if (run(o, send, recv, (int)count, t, op) != MPI_SUCCESS)
            return -1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < o->iters; i++)
        if (run(o, send, recv, (int)count, t, op) != MPI_SUCCESS)
            return -1;
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest * 1e6 / (double)o->iters;
}
