/* libgcl's allocator (alloc.h): the libc calls, each counted as an event of fault injection. */
#include "base/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/fault.h"

void *gcl_malloc(size_t bytes)
{
    if (gcl_fault_hit(GCL_FAULT_ALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    return malloc(bytes);
}

void *gcl_calloc(size_t n, size_t size)
{
    if (gcl_fault_hit(GCL_FAULT_ALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    return calloc(n, size);
}

void *gcl_realloc(void *p, size_t bytes)
{
    if (gcl_fault_hit(GCL_FAULT_ALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
}

char *gcl_strdup(const char *s)
{
    if (gcl_fault_hit(GCL_FAULT_ALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    return strdup(s);
}

int gcl_posix_memalign(void **out, size_t align, size_t bytes)
{
    if (gcl_fault_hit(GCL_FAULT_ALLOC))
        return ENOMEM;
    return posix_memalign(out, align, bytes);
}

void *gcl_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (gcl_fault_hit(GCL_FAULT_MAP)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return mmap(addr, len, prot, flags, fd, off);
}

int gcl_shm_open(const char *name, int oflag, mode_t mode)
{
    if (gcl_fault_hit(GCL_FAULT_MAP)) {
        errno = ENOMEM;
        return -1;
    }
    return shm_open(name, oflag, mode);
}

int gcl_memfd_create(const char *name, unsigned flags)
{
    if (gcl_fault_hit(GCL_FAULT_MAP)) {
        errno = ENOMEM;
        return -1;
    }
    return memfd_create(name, flags);
}
