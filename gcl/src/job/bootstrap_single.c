/* The bootstrap of a one-instance job: every operation is local. Declared in job/bootstrap.h. */
#include "job/bootstrap.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static gcl_status_t single_allgather(gcl_boot_t *b, const void *mine, void *all, size_t bytes)
{
    (void)b;
    memmove(all, mine, bytes);
    return GCL_OK;
}

static gcl_status_t single_bcast(gcl_boot_t *b, void *buf, size_t bytes, int root)
{
    (void)b;
    (void)buf;
    (void)bytes;
    return root == 0 ? GCL_OK : GCL_ERR_INVALID_ARGUMENT;
}

static gcl_status_t single_barrier(gcl_boot_t *b)
{
    (void)b;
    return GCL_OK;
}

static void single_destroy(gcl_boot_t *b)
{
    free(b);
}

gcl_status_t gcl_boot_single_create(gcl_boot_t **out)
{
    gcl_boot_t *b = gcl_calloc(1, sizeof *b);
    if (!b)
        return GCL_ERR_NO_HOST_MEMORY;
    *b = (gcl_boot_t){.name = "single",
                      .rank = 0,
                      .size = 1,
                      .allgather = single_allgather,
                      .bcast = single_bcast,
                      .barrier = single_barrier,
                      .destroy = single_destroy};
    *out = b;
    return GCL_OK;
}
