/* Shareable host memory; see shmem.h. */
#include "job/shmem.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"

typedef struct {
    char *base;
    size_t size;
    int fd;
    uint64_t id;
} region_t;

/* This process's shareable allocations (all its instances'). */
static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
static region_t *regions;
static int nregions, regions_cap;
static _Atomic uint64_t next_id = 1;

void *gcl_shmem_alloc(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (bytes + page - 1) / page * page;
    int fd = gcl_memfd_create("gcl-ipu-memory", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)(size ? size : page)) == 0)
        p = gcl_mmap(NULL, size ? size : page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    pthread_mutex_lock(&regions_lock);
    if (nregions == regions_cap) {
        int cap = regions_cap ? 2 * regions_cap : 32;
        region_t *r = gcl_realloc(regions, (size_t)cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&regions_lock);
            munmap(p, size ? size : page);
            close(fd);
            return NULL;
        }
        regions = r;
        regions_cap = cap;
    }
    regions[nregions++] = (region_t){p, size ? size : page, fd, atomic_fetch_add(&next_id, 1)};
    pthread_mutex_unlock(&regions_lock);
    return p;
}

int gcl_shmem_free(void *p)
{
    pthread_mutex_lock(&regions_lock);
    for (int i = 0; i < nregions; i++) {
        if (regions[i].base == p) {
            region_t r = regions[i];
            regions[i] = regions[--nregions];
            pthread_mutex_unlock(&regions_lock);
            munmap(r.base, r.size);
            close(r.fd);
            return 1;
        }
    }
    pthread_mutex_unlock(&regions_lock);
    return 0;
}

void gcl_shmem_find(const void *p, gcl_shmem_ref_t *out)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    const char *c = p;
    pthread_mutex_lock(&regions_lock);
    for (int i = 0; c && i < nregions; i++) {
        if (c >= regions[i].base && c < regions[i].base + regions[i].size) {
            *out = (gcl_shmem_ref_t){regions[i].fd, (int32_t)getpid(), regions[i].id,
                                     regions[i].size, (uint64_t)(c - regions[i].base)};
            break;
        }
    }
    pthread_mutex_unlock(&regions_lock);
}

/* Peer allocations stay mapped until gcl_finalize: unmapping one could pull memory from under
 * another IPU thread's call. Past this many, calls fall back to process_vm_readv/writev. */
enum { PEER_MAPS_MAX = 8192 };

typedef struct gcl_peer_map {
    int32_t pid;
    uint64_t id, size;
    char *base;
} peer_map_t;

/* Maps REF's allocation of another process: /proc/PID/fd/FD opens the same memfd (the kernel
 * allows it to whoever may read that process's memory). */
static char *map_one(const gcl_shmem_ref_t *ref)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)ref->pid, (int)ref->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size == ref->size)
        p = gcl_mmap(NULL, ref->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

void gcl_peer_maps_init(gcl_peer_maps_t *m)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
}

char *gcl_shmem_peer(gcl_peer_maps_t *pm, const gcl_shmem_ref_t *ref)
{
    if (ref->fd < 0 || ref->off >= ref->size)
        return NULL;
    char *base = NULL;
    pthread_mutex_lock(&pm->lock);
    for (int i = 0; i < pm->n && !base; i++)
        if (pm->maps[i].pid == ref->pid && pm->maps[i].id == ref->id)
            base = pm->maps[i].base;
    if (!base && pm->n < PEER_MAPS_MAX) {
        if (pm->n == pm->cap) {
            int cap = pm->cap ? 2 * pm->cap : 32;
            peer_map_t *m = gcl_realloc(pm->maps, (size_t)cap * sizeof *m);
            if (m) {
                pm->maps = m;
                pm->cap = cap;
            }
        }
        if (pm->n < pm->cap && (base = map_one(ref)) != NULL)
            pm->maps[pm->n++] = (peer_map_t){ref->pid, ref->id, ref->size, base};
    }
    pthread_mutex_unlock(&pm->lock);
    return base ? base + ref->off : NULL;
}

void gcl_shmem_unmap_peers(gcl_peer_maps_t *pm)
{
    for (int i = 0; i < pm->n; i++)
        munmap(pm->maps[i].base, pm->maps[i].size);
    free(pm->maps);
    pm->maps = NULL;
    pm->n = pm->cap = 0;
    pthread_mutex_destroy(&pm->lock);
}
