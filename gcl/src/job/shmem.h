/*
 * Shareable host memory: what gcl_ipu_malloc hands out. Each allocation is a memfd mapped shared,
 * so another process of the host that may read this one's memory (the same test as
 * process_vm_readv) can map it too, once, and then read and write it with plain loads and
 * stores: host-direct collectives between processes then move each byte once, without a system
 * call per piece.
 */
#ifndef GCL_SHMEM_H
#define GCL_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

/* Other processes' allocations mapped into this one (one table per instance). */
typedef struct {
    pthread_mutex_t lock;
    struct gcl_peer_map *maps;
    int n, cap;
} gcl_peer_maps_t;

/* Where a byte of shareable memory is, as another process can find it. fd < 0: not shareable. */
typedef struct {
    int32_t fd;    /* the allocation's memfd in its owner's process */
    int32_t pid;   /* the owner */
    uint64_t id;   /* unique per allocation (fds are reused after a free) */
    uint64_t size; /* of the whole allocation */
    uint64_t off;  /* of the byte within it */
} gcl_shmem_ref_t;

/* BYTES of shareable memory (page-aligned), or NULL (the caller falls back to the heap). */
void *gcl_shmem_alloc(size_t bytes);
/* Frees P if it came from gcl_shmem_alloc; returns 1 if it did, 0 if P is not shareable. */
int gcl_shmem_free(void *p);
/* Describes P (any byte of a shareable allocation); fd = -1 when P is not in one. */
void gcl_shmem_find(const void *p, gcl_shmem_ref_t *out);
void gcl_peer_maps_init(gcl_peer_maps_t *m);
/* The address in this process of the byte REF describes in another process, mapping its
 * allocation on first use (kept in M). NULL when it cannot be mapped. */
char *gcl_shmem_peer(gcl_peer_maps_t *m, const gcl_shmem_ref_t *ref);
/* Unmaps every peer allocation in M and frees M's table. */
void gcl_shmem_unmap_peers(gcl_peer_maps_t *m);

#endif /* GCL_SHMEM_H */
