/*
 * The nccl-tests tools over libgcl: all_reduce_perf, reduce_scatter_perf, all_gather_perf,
 * broadcast_perf and alltoall_perf, with nccl-tests' flags, meanings and output, so that
 * command lines and the scripts that parse their output work unchanged:
 *
 *   poprun --num-instances 4 --num-replicas 4 all_reduce_perf -b 8 -e 128M -f 2 -g 1
 *   mpirun -np 4 all_reduce_perf -b 8 -e 128M -f 2 -g 1
 *
 * A "rank" (nccl-tests' GPU) is a replica: -g replicas per thread, -t threads per process, one
 * process per MPI rank (mpirun) or per poprun instance. Each size runs out of place, then in
 * place, -n times (after -w warm-up runs), and is checked -c times against an independent
 * reference (examples/common/ref.c): #wrong counts the elements that differ. The footer says
 * how many sizes had wrong elements ("# Out of bounds values") and the mean bus bandwidth of all
 * rows ("# Avg bus bandwidth"), as nccl-tests prints them.
 *
 * Files: args.c (the command line), agree.c (the same flags on every rank), run.c (what each
 * replica runs), report.c (the text and JSON output), and one file per tool with its
 * collective's sizes and bus factor.
 */
#ifndef EXAMPLES_NCCL_H
#define EXAMPLES_NCCL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gcl/gcl.h"

/* What one tool measures: its collective and nccl-tests' arithmetic for it. */
typedef struct {
    const char *name; /* "all_reduce_perf" */
    int coll;         /* REF_ALL_REDUCE, ... (examples/common/ref.h) */
    int reduces;      /* takes -o */
    int rooted;       /* takes -r */
    /* From the size in bytes (as -b/-e count it) and N ranks: the elements each rank sends and
     * receives, the count passed to the call, and the in-place offsets (in elements, per
     * rank), as nccl-tests' getCollByteCount. */
    void (*counts)(size_t count, int n, size_t *send, size_t *recv, size_t *param,
                   size_t *send_inplace, size_t *recv_inplace);
    /* Bus bandwidth over algorithm bandwidth for N ranks (nccl-tests' doc/PERFORMANCE.md). */
    double (*bus_factor)(int n);
    /* The bytes the algorithm bandwidth divides by, from the call's count. */
    double (*alg_bytes)(size_t param, size_t elem, int n);
} nccl_coll_t;

/* The command line, nccl-tests' flags. */
typedef struct {
    int nthreads, ngpus;         /* -t, -g: replicas per process = nthreads x ngpus */
    int ngpus_set;               /* -g or -t was given */
    size_t min_bytes, max_bytes; /* -b, -e */
    size_t step_bytes;           /* -i */
    size_t step_factor;          /* -f (1: use -i) */
    int iters, warmup, agg;      /* -n, -w, -m */
    int check;                   /* -c: check runs per size, 0 for none */
    int average;                 /* -a: 0 rank 0, 1 mean, 2 min, 3 max */
    int blocking;                /* -z */
    int cycles;                  /* -N */
    int ntypes, nops;            /* -d / -o: one, or every one ("all") */
    gcl_dtype_t types[8];
    gcl_redop_t ops[8];
    const char *type_names[8], *op_names[8];
    int root;         /* -r: a rank, or -1 for every rank ("all") */
    const char *json; /* -J FILE */
    int corrupt;      /* hidden --_corrupt: the last rank spoils one element before each check
                         (the tests' proof that #wrong can count) */
} nccl_opts_t;

/* Parses ARGV for TOOL. Returns 0, 1 after --help, or 2 after one line on stderr. */
int nccl_parse(const nccl_coll_t *tool, int argc, char **argv, nccl_opts_t *o);

/* One row of results: an out-of-place or in-place run of one size. */
typedef struct {
    size_t bytes, count;
    const char *type, *op;
    int root, in_place;
    double time_us, algbw, busbw;
    long long wrong; /* -1: not checked */
} nccl_row_t;

/* The job, shared by every replica of this instance; rank 0's thread writes the output. */
typedef struct {
    const nccl_coll_t *tool;
    const nccl_opts_t *o;
    gcl_job_info_t info;
    int argc;
    char **argv;
    FILE *json; /* -J, on instance 0 */
    int json_rows;
    int row_open;     /* a row is half printed (a failure ends its line first) */
    int json_open;    /* what a failure must close: 1 config, 2 nothing, 3 results, 4 a row */
    int errors;       /* rows with wrong elements */
    int other_errors; /* rows with wrong elements of the IPUs after each replica's first */
    double bw_sum;    /* of every row's busbw */
    int bw_count;     /* rows */
    char error[512];  /* the first failure: libgcl's text */
    int failed;
    const char *fail_file; /* where it was seen */
    int fail_line;
    gcl_status_t fail_status;
    char usage[512]; /* ranks given different flags: the line naming them (instance 0) */
    int usage_error;
} nccl_job_t;

/* What each IPU of each replica runs (gcl_run's program). Every IPU position of the replicas
 * runs the sweep on its own communicator (as each stage of a pipelined model reduces its own
 * gradients); the first IPU of rank 0 prints. */
gcl_status_t nccl_program(gcl_ctx_t ctx, void *arg);

/* Whether every rank of COMM was given the flags of rank 0 (agree.c): GCL_OK, or
 * GCL_ERR_INVALID_ARGUMENT with WHY set to the line naming the instance and the flags that
 * differ ("instance 1 has -n 20, instance 0 -n 10"), or the status of a failed call. */
gcl_status_t nccl_agree(gcl_comm_t comm, nccl_job_t *job, char *why, size_t len);

/* The output, written by rank 0. nccl_report_ranks gets each rank's line of "# Using
 * devices" in rank order. */
void nccl_report_header(nccl_job_t *job);
void nccl_report_ranks(nccl_job_t *job, char *const *lines, int n);
void nccl_report_table_header(nccl_job_t *job);
void nccl_report_row_start(nccl_job_t *job, const nccl_row_t *r);
void nccl_report_row_half(nccl_job_t *job, const nccl_row_t *r);
void nccl_report_row_end(nccl_job_t *job);
/* The footer; returns the exit status (1 when values were wrong or NCCL_TESTS_MIN_BW failed). */
int nccl_report_footer(nccl_job_t *job);
/* A run that failed, in nccl-tests' form instead of the footer (no "Out of bounds values"
 * line, which a script would read as a verdict), on this instance's stdout:
 *   HOST: Test NCCL failure FILE:LINE 'STATUS / DETAIL'
 *    .. HOST pid PID: Test failure FILE:LINE
 * Returns the exit status, nccl-tests' testNcclError (3). */
int nccl_report_failure(nccl_job_t *job, const char *detail);

/* The tools' shared main. */
int nccl_main(const nccl_coll_t *tool, int argc, char **argv);

#endif /* EXAMPLES_NCCL_H */
