/*
 * Every rank must run the same sweep: a rank started with other flags than rank 0's would call
 * other collectives, and libgcl would then report the mismatch of some internal call
 * ("all_reduce #33 of 1 x u64"), which tells the user nothing about what to fix. So before
 * anything is measured, every rank all-gathers the flags that shape the sweep, in canonical
 * text, and compares them with rank 0's. When they differ, instance 0 prints one line naming
 * the instance and each flag that differs, with both values:
 *
 *   all_reduce_perf: instance 1 has -n 20, instance 0 -n 10 (every rank must be given the same
 *   flags)
 *
 * and every rank returns GCL_ERR_INVALID_ARGUMENT, so that all of them stop at the same point
 * with a usage error (exit status 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl.h"

#define NFLAGS    13
#define FLAG_TEXT 28

/* The flags of one rank, as text; sized to a whole number of u32 for the all_gather. */
typedef struct {
    int32_t instance;
    char value[NFLAGS][FLAG_TEXT];
} flags_t;

static const char flag_names[NFLAGS] = {'b', 'e', 'i', 'f', 'n', 'w', 'm',
                                        'c', 'a', 'z', 'N', 'd', 'o'};

static void list(char *out, size_t len, const char *const *names, int n)
{
    snprintf(out, len, "%s", n > 1 ? "all" : names[0]);
}

static void describe(const nccl_opts_t *o, int instance, flags_t *f)
{
    memset(f, 0, sizeof *f);
    f->instance = instance;
    snprintf(f->value[0], FLAG_TEXT, "%zu", o->min_bytes);
    snprintf(f->value[1], FLAG_TEXT, "%zu", o->max_bytes);
    snprintf(f->value[2], FLAG_TEXT, "%zu", o->step_bytes);
    snprintf(f->value[3], FLAG_TEXT, "%zu", o->step_factor);
    snprintf(f->value[4], FLAG_TEXT, "%d", o->iters);
    snprintf(f->value[5], FLAG_TEXT, "%d", o->warmup);
    snprintf(f->value[6], FLAG_TEXT, "%d", o->agg);
    snprintf(f->value[7], FLAG_TEXT, "%d", o->check);
    snprintf(f->value[8], FLAG_TEXT, "%d", o->average);
    snprintf(f->value[9], FLAG_TEXT, "%d", o->blocking);
    snprintf(f->value[10], FLAG_TEXT, "%d", o->cycles);
    list(f->value[11], FLAG_TEXT, o->type_names, o->ntypes);
    list(f->value[12], FLAG_TEXT, o->op_names, o->nops);
}

/* "instance 1 has -n 20 -b 2048, instance 0 -n 10 -b 1024" into OUT; 0 when they agree. */
static int differ(const flags_t *mine, const flags_t *first, int rooted, int root0, int root,
                  char *out, size_t len)
{
    char has[256] = "", want[256] = "";
    size_t h = 0, w = 0;
    for (int i = 0; i < NFLAGS; i++) {
        if (strcmp(mine->value[i], first->value[i]) == 0)
            continue;
        h += (size_t)snprintf(has + h, sizeof has - h, " -%c %s", flag_names[i], mine->value[i]);
        w += (size_t)snprintf(want + w, sizeof want - w, " -%c %s", flag_names[i], first->value[i]);
        if (h >= sizeof has || w >= sizeof want)
            break;
    }
    if (rooted && root != root0 && h < sizeof has && w < sizeof want) {
        char a[16], b[16];
        snprintf(a, sizeof a, root < 0 ? "all" : "%d", root);
        snprintf(b, sizeof b, root0 < 0 ? "all" : "%d", root0);
        h += (size_t)snprintf(has + h, sizeof has - h, " -r %s", a);
        w += (size_t)snprintf(want + w, sizeof want - w, " -r %s", b);
    }
    if (!h)
        return 0;
    snprintf(out, len, "instance %d has%s, instance %d%s (every rank must be given the same flags)",
             mine->instance, has, first->instance, want);
    return 1;
}

gcl_status_t nccl_agree(gcl_comm_t comm, nccl_job_t *job, char *why, size_t len)
{
    int n = gcl_comm_size(comm);
    flags_t mine, *all = malloc((size_t)n * sizeof *all);
    int32_t *roots = malloc((size_t)n * sizeof *roots);
    gcl_status_t rc = all && roots ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
    describe(job->o, job->info.instance_index, &mine);
    int32_t root = job->o->root;
    _Static_assert(sizeof(flags_t) % 4 == 0, "flags_t is gathered as u32");
    if (rc == GCL_OK)
        rc = gcl_all_gather(comm, &mine, all, sizeof mine / 4, GCL_U32);
    if (rc == GCL_OK)
        rc = gcl_all_gather(comm, &root, roots, 1, GCL_I32);
    for (int q = 1; rc == GCL_OK && q < n; q++)
        if (differ(&all[q], &all[0], job->tool->rooted, roots[0], roots[q], why, len))
            rc = GCL_ERR_INVALID_ARGUMENT;
    free(roots);
    free(all);
    return rc;
}
