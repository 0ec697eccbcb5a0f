/*
 * Environment parameters. Every GCL_* variable is declared once, in the table in param.c, with
 * its name, default and one line of documentation; gcl_init reads them all into a gcl_params_t
 * and rejects a bad value with a one-line error. `gcl-info` lists them.
 */
#ifndef GCL_PARAM_H
#define GCL_PARAM_H

#include <stddef.h>
#include <stdio.h>

#include "coll/types.h"
#include "gcl/status.h"

typedef struct {
    int log_level;
    unsigned log_subsys;
    long log_time;       /* 1: log lines start with the wall-clock time */
    double timeout_s;    /* blocking calls give up after this long */
    double stall_warn_s; /* and warn about missing peers after this long */
    long spin_count;     /* polls before a waiting thread sleeps */
    long shm_chunk_bytes;
    long shm_chunks; /* staging buffers per IPU */
    long shm_slots;  /* message slots per ordered pair of IPUs */
    long mpi_chunk_bytes;
    long shm_direct_bytes; /* per IPU, each of the host-direct input and result regions */
    long direct_min_bytes; /* smallest call that goes host-direct */
    long eager_max_bytes;  /* largest call that goes eager (engine/eager.c); 0: never */
    long shm_cma;          /* let host-direct calls read and write peers' buffers in place */
    char transport[16];    /* auto, shm, tcp, ofi or mpi */
    char tcp_iface[64];
    long tcp_chunk_bytes;
    char ofi_provider[64];
    char ofi_iface[64];
    long ofi_chunk_bytes;
    long heap_keep_bytes;    /* freed memory glibc keeps once tcp or ofi runs (heap.h) */
    long sim_phantom;        /* 1: buffers carry sizes, no data */
    long num_local_replicas; /* without poprun: replicas of this instance */
    long ipus_per_replica;   /* without poprun: IPUs per replica */
    double heartbeat_s;      /* between the instances of a job over several hosts */
    double peer_timeout_s;   /* silence after which an instance on another host is gone */
    char topology[256];      /* GCL_TOPOLOGY: a preset or a file, "" for the default */
    char sim_report[256];
    char sim_trace[256];
    long sim_trace_events;
    char algo[COLL_COLLECTIVE_COUNT][48];
    char gcl_method[48];    /* GCL_OPTIONS' "method", or "" */
    char fault_inject[128]; /* GCL_FAULT_INJECT (tests only; fault.c arms it in gcl_init) */
} gcl_params_t;

/* Reads every parameter from the environment. On a bad value returns GCL_ERR_INVALID_ARGUMENT
 * with a sentence naming the variable in ERR. */
gcl_status_t gcl_params_load(gcl_params_t *p, char *err, size_t len);

/* Lists every parameter: name, default, value in this environment, documentation; as a
 * Markdown table when MARKDOWN (for the README). */
void gcl_params_print(FILE *out, int markdown);

#endif /* GCL_PARAM_H */
