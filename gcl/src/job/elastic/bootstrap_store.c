/* The bootstrap of an elastic job's epoch: every call is one call of poprun's store over the
 * epoch's members. Declared in job/bootstrap.h. */
#include "job/bootstrap.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "job/elastic/store.h"

typedef struct {
    gcl_store_t *store;
    double timeout_s;
    unsigned flags; /* of the last answer */
} store_boot_t;

static gcl_status_t call(gcl_boot_t *b, int root, const void *in, size_t bytes, void *out,
                         size_t out_bytes)
{
    store_boot_t *m = b->impl;
    b->why[0] = '\0';
    return gcl_store_coll(m->store, root, in, bytes, out, out_bytes, &m->flags, m->timeout_s,
                          b->why, sizeof b->why);
}

static gcl_status_t store_allgather(gcl_boot_t *b, const void *mine, void *all, size_t bytes)
{
    return call(b, -1, mine, bytes, all, bytes * (size_t)b->size);
}

static gcl_status_t store_bcast(gcl_boot_t *b, void *buf, size_t bytes, int root)
{
    if (root < 0 || root >= b->size)
        return GCL_ERR_INVALID_ARGUMENT;
    return call(b, root, buf, bytes, buf, bytes);
}

static gcl_status_t store_barrier(gcl_boot_t *b)
{
    char none = 0;
    return call(b, -1, &none, 0, &none, 0);
}

static void store_destroy(gcl_boot_t *b)
{
    free(b->impl);
    free(b);
}

gcl_status_t gcl_boot_store_create(struct gcl_store *store, int rank, int size, double timeout_s,
                                   gcl_boot_t **out)
{
    gcl_boot_t *b = gcl_calloc(1, sizeof *b);
    store_boot_t *m = gcl_calloc(1, sizeof *m);
    if (!b || !m) {
        free(b);
        free(m);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    *m = (store_boot_t){store, timeout_s, 0};
    b->name = "store";
    b->rank = rank;
    b->size = size;
    b->allgather = store_allgather;
    b->bcast = store_bcast;
    b->barrier = store_barrier;
    b->destroy = store_destroy;
    b->impl = m;
    *out = b;
    return GCL_OK;
}

unsigned gcl_boot_store_flags(const gcl_boot_t *b)
{
    return b && b->destroy == store_destroy ? ((const store_boot_t *)b->impl)->flags : 0;
}
