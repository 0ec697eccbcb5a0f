/* Freed memory kept for reuse; see heap.h. */
#include "transport/net/heap.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* glibc's own ceiling for the mmap threshold it raises as chunks are freed (64-bit). */
#define MMAP_CEILING ((long)32 << 20)
#define MMAP_FLOOR   ((long)128 << 10)

static int user_set(void)
{
    const char *t = getenv("GLIBC_TUNABLES");
    return getenv("MALLOC_TRIM_THRESHOLD_") || getenv("MALLOC_MMAP_THRESHOLD_") ||
           (t &&
            (strstr(t, "glibc.malloc.trim_threshold") || strstr(t, "glibc.malloc.mmap_threshold")));
}

int gcl_heap_keep(long keep)
{
    static atomic_int done;
    if (keep <= 0 || user_set() || atomic_exchange(&done, 1))
        return 0;
#ifdef __GLIBC__
    long mmap_at = keep / 2 < MMAP_FLOOR ? MMAP_FLOOR : keep / 2;
    /* Setting either turns glibc's own adjustment of both off: the mmap threshold first, so
     * no request between the two calls is served by the other policy. */
    mallopt(M_MMAP_THRESHOLD, (int)(mmap_at < MMAP_CEILING ? mmap_at : MMAP_CEILING));
    mallopt(M_TRIM_THRESHOLD, (int)keep);
    return 1;
#else
    return 0;
#endif
}
