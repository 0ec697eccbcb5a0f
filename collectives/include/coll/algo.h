/*
 * Algorithms and their registry.
 *
 * Each algorithm lives in its own file under collectives/<collective>/ and exports one
 * coll_algo_t. The registry (collectives/src/registry.c) lists them per collective; gcl reads it
 * for GCL_<COLLECTIVE>_ALGO=name overrides, and the choice layer (choice/) replays them all on
 * the simulated pod for the automatic choice.
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
 *
 * Reductions (all_reduce, reduce_scatter) accept every pair coll_redop_valid accepts. Every
 * element is reduced in an order the schedule fixes (operand order included, see COLL_OPF_SWAP),
 * so all ranks and all runs get the same bits. MEAN sums, then divides once by nranks where the
 * sum is final, so every rank divides the same bits. SQUARE_ADD adds the contributions as they
 * are: squaring each is the caller's job (gcl squares its input before running the schedule).
 * LOCAL builds no communication at all (see coll_build).
 */
typedef struct coll_args {
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
    /* Hosts of the group's ranks, the same way (NULL when unknown): the canonical order's data
     * path reduces inside a host first and moves only what must cross. */
    const int *host_of;
    /* Pipelined algorithms (trees, chains) cut their data into segments of about this many bytes
     * so that the hops stream; 0 picks COLL_CHUNK_BYTES. Tests set it small to exercise many
     * segments with little data. */
    size_t chunk_bytes;
} coll_args_t;

/* Default segment size of pipelined algorithms, and the most segments they cut a range into
 * (larger ranges get larger segments, so a schedule never has more than a few hundred steps). */
#define COLL_CHUNK_BYTES  ((size_t)128 << 10)
#define COLL_MAX_SEGMENTS 256

typedef struct {
    const char *name;        /* as GCL_<COLLECTIVE>_ALGO takes it, e.g. "clockwise_ring" */
    const char *description; /* one line for listings */
    coll_collective_t coll;
    int (*build)(const coll_args_t *a, coll_schedule_t *s);
    /* Optional: returns 0 when the algorithm can run A, else -1 with a sentence in *WHY. */
    int (*supports)(const coll_args_t *a, const char **why);
    /* 1 for the message form of the canonical order (coll/canon.h): a data path, not an
     * algorithm GCL runs on a pod, so the cost model never picks it; it can still be forced. */
    int canonical;
} coll_algo_t;

/* The algorithms of collective C, in registry order (*N of them). */
const coll_algo_t *const *coll_algo_list(coll_collective_t c, size_t *n);
/* The algorithm of C called NAME, or NULL. */
const coll_algo_t *coll_algo_find(coll_collective_t c, const char *name);

/*
 * Builds the schedule of A's rank into S (reset first): fills in the buffer sizes and aliasing
 * that the collective implies, then runs the algorithm's builder. Returns 0, -EINVAL when the
 * arguments are invalid (rank or root outside the group, a type/operator pair that
 * coll_redop_valid rejects for a reducing collective) or the algorithm does not support A (a
 * sentence in *WHY), or -ENOMEM.
 *
 * COLL_LOCAL on all_reduce and reduce_scatter builds a schedule without communication whatever
 * the algorithm: every rank keeps its own values (OUT = IN, or IN's block RANK for
 * reduce_scatter), and s->algo is "local".
 */
int coll_build(const coll_algo_t *algo, const coll_args_t *a, coll_schedule_t *s, const char **why);

/*
 * The environment variable that forces an algorithm of C, e.g. "GCL_ALLREDUCE_ALGO" (gcl reads
 * it; collectives/ does no I/O). NULL for an invalid collective.
 */
const char *coll_algo_env_name(coll_collective_t c);

/*
 * Resolves a forced name: NAME must be an algorithm of A->coll that supports A ("auto" is not
 * one: the automatic choice is the cost model's, in choice/). Returns 0 with *OUT set and a
 * sentence for the log in WHY, or -EINVAL with a sentence in WHY (unknown name, listing the
 * known ones; or why the algorithm cannot run A).
 */
int coll_algo_select(const coll_args_t *a, const char *name, const coll_algo_t **out, char *why,
                     unsigned len);

#endif /* COLL_ALGO_H */
