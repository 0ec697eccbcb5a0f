/*
 * mpi-peer: the plain MPI program the comparison runs as its MPI peers, as their users would:
 * built with the MPI's own compiler wrapper (mpicc.openmpi, mpicc.mpich) and launched by its
 * own launcher in a job of its own (mpirun -np N, mpiexec.mpich -n N). It times MPI_Allreduce
 * (f32 sum, out of place), MPI_Bcast (root 0) or MPI_Barrier (--latency) over MPI_COMM_WORLD by
 * the rule gcl-bench uses (../rule.h), checks one result per size, and prints a row per size
 * (peer.h).
 *
 *   mpirun -np 4 build/bin/mpi-peer-openmpi all_reduce -b 4K -e 256M -f 4 --csv out.csv
 *   mpiexec.mpich -n 4 build/bin/mpi-peer-mpich all_reduce --latency
 *   mpirun -np 4 --oversubscribe build/bin/mpi-peer-openmpi barrier --latency
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

/* The build names the MPI (-DPEER_IMPL_NAME=openmpi or mpich). */
#ifndef PEER_IMPL_NAME
#define PEER_IMPL_NAME mpi
#endif
#define PEER_STR2(x) #x
#define PEER_STR(x)  PEER_STR2(x)
#define PEER_IMPL    PEER_STR(PEER_IMPL_NAME)

typedef struct {
    const peer_opts_t *o;
    float *send, *recv;
    int count, rank, n;
} mpi_size_t;

static int call(const mpi_size_t *s)
{
    if (!strcmp(s->o->collective, "barrier"))
        return MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(s->o->collective, "broadcast"))
        return MPI_Bcast(s->rank == 0 ? s->send : s->recv, s->count, MPI_FLOAT, 0, MPI_COMM_WORLD);
    return MPI_Allreduce(s->send, s->recv, s->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static double batch(void *arg, long n)
{
    mpi_size_t *s = arg;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), mine, slowest = -1;
    int ok = 1;
    for (long i = 0; i < n && ok; i++)
        ok = call(s) == MPI_SUCCESS;
    mine = ok ? MPI_Wtime() - t0 : -1e30;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double worst_ok;
    MPI_Allreduce(&mine, &worst_ok, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return worst_ok < 0 ? -1 : slowest;
}

/* Single calls with a barrier after each: the mean over the ranks of each call's time. */
static int latency(mpi_size_t *s, peer_row_t *row)
{
    long n = s->o->samples;
    double *mine = calloc((size_t)n, sizeof *mine), *sum = calloc((size_t)n, sizeof *sum);
    int rc = mine && sum ? 0 : -1;
    for (long i = 0; i < s->o->rule.warmup && rc == 0; i++) {
        rc = call(s) == MPI_SUCCESS ? 0 : -1;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (long i = 0; i < n && rc == 0; i++) {
        double t0 = MPI_Wtime();
        rc = call(s) == MPI_SUCCESS ? 0 : -1;
        mine[i] = (MPI_Wtime() - t0) * 1e6;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rc == 0)
        MPI_Allreduce(mine, sum, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (long i = 0; i < n && rc == 0; i++)
        sum[i] /= s->n;
    if (rc == 0)
        rule_percentiles(sum, n, &row->p50_us, &row->p99_us);
    row->samples = n;
    free(mine);
    free(sum);
    return rc;
}

static unsigned long long check(mpi_size_t *s)
{
    int bcast = !strcmp(s->o->collective, "broadcast");
    for (int i = 0; i < s->count; i++) {
        s->send[i] = peer_fill(s->rank, (size_t)i);
        s->recv[i] = -1;
    }
    unsigned long long bad = call(s) == MPI_SUCCESS ? 0 : (unsigned long long)s->count, all = 0;
    const float *got = bcast && s->rank == 0 ? s->send : s->recv;
    for (int i = 0; i < s->count && !bad; i++)
        bad += got[i] != (bcast ? peer_fill(0, (size_t)i) : peer_sum(s->n, (size_t)i));
    MPI_Allreduce(&bad, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* Distinct processor names: the hosts of the job. */
static int count_hosts(int rank, int n)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len, hosts = 0;
    MPI_Get_processor_name(name, &len);
    char *all = rank == 0 ? calloc((size_t)n, MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME,
                           all + (size_t)j * MPI_MAX_PROCESSOR_NAME);
        hosts += !seen;
    }
    free(all);
    MPI_Bcast(&hosts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return hosts;
}

static int run_sizes(const peer_opts_t *o, int rank, int n, int hosts)
{
    size_t max = 0;
    for (int i = 0; i < o->nsizes; i++)
        max = o->sizes[i] > max ? o->sizes[i] : max;
    mpi_size_t s = {.o = o, .rank = rank, .n = n};
    s.send = calloc(max / 4 + 1, 4);
    s.recv = calloc(max / 4 + 1, 4);
    int rc = s.send && s.recv ? 0 : 1;
    for (int i = 0; i < o->nsizes && rc == 0; i++) {
        peer_row_t row = {.bytes = o->sizes[i]};
        s.count = (int)(o->sizes[i] / 4);
        memset(s.send, 0, (size_t)s.count * 4);
        rc = o->latency ? latency(&s, &row) : rule_time(&o->rule, batch, &s, &row.r);
        if (rc == 0 && o->check && strcmp(o->collective, "barrier"))
            row.wrong = check(&s);
        if (rc == 0 && rank == 0 && peer_row(o, PEER_IMPL, n, hosts, &row) != 0)
            rc = 1;
        rc = rc || row.wrong;
        int any = 0; /* every rank stops together */
        MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        rc = any;
    }
    free(s.send);
    free(s.recv);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const char *const algos[] = {"MPI_Allreduce", NULL};
    peer_opts_t o;
    int prc = peer_parse(argc, argv, "mpi-peer-" PEER_IMPL, algos, &o);
    if (prc)
        return prc == 1 ? 0 : 2;
    if (!strcmp(o.collective, "broadcast"))
        o.algo = "MPI_Bcast";
    if (!strcmp(o.collective, "barrier"))
        o.algo = "MPI_Barrier";
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int hosts = count_hosts(rank, n);
    if (rank == 0)
        peer_header(&o, PEER_IMPL, n, hosts);
    int rc = run_sizes(&o, rank, n, hosts);
    if (rc && rank == 0)
        fprintf(stderr,
                "mpi-peer-%s: a call failed, a result was wrong or the CSV could not be "
                "written\n",
                PEER_IMPL);
    MPI_Finalize();
    return rc;
}
