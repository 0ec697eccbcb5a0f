/*
 * Algorithms and their registry.
 *
 * Each algorithm lives in its own file under collectives/<collective>/ and exports one
 * coll_algo_t. The registry (collectives/src/registry.c) lists them per collective; gcl reads it
 * both for GCL_<COLLECTIVE>_ALGO=name overrides and for the automatic choice.
 */
#ifndef COLL_ALGO_H
#define COLL_ALGO_H

#include <stddef.h>

#include "coll/schedule.h"
#include "coll/types.h"

/*
 * What a builder needs to know: the collective, who this rank is, and the shape of the data.
 * COUNT means, per collective (the layout NCCL uses):
 *   all_reduce      elements in IN and in OUT
 *   reduce_scatter  elements in OUT; IN holds nranks blocks of COUNT (block r is rank r's result)
 *   all_gather      elements in IN; OUT holds nranks blocks of COUNT (block r came from rank r)
 *   broadcast       elements in IN (read on ROOT only) and OUT
 *   all_to_all      elements per block; IN and OUT hold nranks blocks each (IN block q goes to
 *                   rank q and lands in its OUT block r)
 *   barrier         ignored
 */
typedef struct {
    coll_collective_t coll;
    int rank, nranks;
    uint64_t count;
    int root; /* broadcast only */
    coll_dtype_t dtype;
    coll_redop_t op;
    size_t elem_size;
    /* Locality of the group's ranks: node_of[q] is the same number for ranks in one process (an
     * instance) and different otherwise. NULL when unknown; hierarchical algorithms need it. */
    const int *node_of;
} coll_args_t;

typedef struct {
    const char *name;        /* as GCL_<COLLECTIVE>_ALGO takes it, e.g. "clockwise_ring" */
    const char *description; /* one line for listings */
    coll_collective_t coll;
    int (*build)(const coll_args_t *a, coll_schedule_t *s);
    /* Optional: returns 0 when the algorithm can run A, else -1 with a sentence in *WHY. */
    int (*supports)(const coll_args_t *a, const char **why);
} coll_algo_t;

/* The algorithms of collective C, in registry order (*N of them). */
const coll_algo_t *const *coll_algo_list(coll_collective_t c, size_t *n);
/* The algorithm of C called NAME, or NULL. */
const coll_algo_t *coll_algo_find(coll_collective_t c, const char *name);

/*
 * Builds the schedule of A's rank into S (reset first): fills in the buffer sizes and aliasing
 * that the collective implies, then runs the algorithm's builder. Returns 0, -EINVAL when the
 * algorithm does not support A (a sentence in *WHY), or -ENOMEM.
 */
int coll_build(const coll_algo_t *algo, const coll_args_t *a, coll_schedule_t *s, const char **why);

#endif /* COLL_ALGO_H */
