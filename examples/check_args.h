/* allreduce-check's command line. */
#ifndef CHECK_ARGS_H
#define CHECK_ARGS_H

#include <stddef.h>

#include "gcl/types.h"

enum { CHECK_MAX_LIST = 32 };

typedef struct {
    int replicas, ipus_per_replica; /* for a run without poprun */
    size_t sizes[CHECK_MAX_LIST];   /* bytes per replica */
    int nsizes;
    gcl_group_t groups[CHECK_MAX_LIST];
    int ngroups; /* 0: a default set once the number of replicas is known */
    gcl_dtype_t types[CHECK_MAX_LIST];
    int ntypes;
    gcl_redop_t ops[CHECK_MAX_LIST];
    int nops;
    int iterations;
    int exit_before; /* instance that leaves before any collective, or -1 */
    int verbose;
} check_opts_t;

/* Parses ARGV. Returns 0, 1 after printing help, or 2 after printing a one-line error. */
int check_parse_args(int argc, char **argv, check_opts_t *o);

/* Fills in the default groups for NREPLICAS, or checks the given ones divide it. Returns 0, or 2
 * after printing a one-line error. */
int check_resolve_groups(check_opts_t *o, int nreplicas);

#endif
