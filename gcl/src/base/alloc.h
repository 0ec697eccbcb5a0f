/*
 * libgcl's allocator: every heap allocation and every mapping libgcl's own code makes goes
 * through these calls, which behave as the libc calls they wrap, except that each is an event
 * of fault injection (base/fault.h): when GCL_FAULT_INJECT names it, it fails as the host would
 * when out of memory (NULL or MAP_FAILED or -1, errno ENOMEM; posix_memalign returns ENOMEM).
 */
#ifndef GCL_ALLOC_H
#define GCL_ALLOC_H

#include <stddef.h>
#include <sys/types.h>

/* libgcl's allocations: malloc, calloc, realloc, strdup and posix_memalign that fail when
 * GCL_FAULT_INJECT says so. */
void *gcl_malloc(size_t bytes);
void *gcl_calloc(size_t n, size_t size);
void *gcl_realloc(void *p, size_t bytes);
char *gcl_strdup(const char *s);
int gcl_posix_memalign(void **out, size_t align, size_t bytes);

/* libgcl's mappings: mmap, shm_open and memfd_create, likewise. */
void *gcl_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int gcl_shm_open(const char *name, int oflag, mode_t mode);
int gcl_memfd_create(const char *name, unsigned flags);

#endif /* GCL_ALLOC_H */
