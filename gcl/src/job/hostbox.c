/* The host box: creating, attaching and the slot and doorbell primitives; see hostbox.h. */
#include "job/hostbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "base/alloc.h"

#define GCL_HOSTBOX_MAGIC 0x31584f424c434721ull /* "!GCLBOX1" */

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

static void layout(gcl_hostbox_header_t *h, int num_ipus, const gcl_hostbox_sizes_t *z, int shared)
{
    size_t n = (size_t)num_ipus;
    size_t chunks = shared ? (size_t)z->chunks : 0, direct = shared ? z->direct_bytes : 0;
    h->magic = GCL_HOSTBOX_MAGIC;
    h->num_ipus = (uint32_t)num_ipus;
    h->slots = (uint32_t)z->slots;
    h->chunks = (uint32_t)chunks;
    h->chunk_bytes = z->chunk_bytes;
    h->direct_bytes = direct;
    h->off_ipus = 4096;
    h->off_slots = round_up(h->off_ipus + n * sizeof(gcl_hostbox_ipu_t), 4096);
    h->off_pool =
        round_up(h->off_slots + n * n * (size_t)z->slots * sizeof(gcl_hostbox_slot_t), 4096);
    h->off_direct = round_up(h->off_pool + n * chunks * z->chunk_bytes, 4096);
    h->off_eager = round_up(h->off_direct + n * 2 * direct, 4096);
    h->eager_bytes = z->eager_bytes;
    h->eager_cell_bytes = z->eager_bytes == 0 ? 0
                                              : round_up(GCL_EAGER_HEAD + z->eager_bytes, 64) +
                                                    GCL_EAGER_MAX_RANKS * sizeof(uint64_t) +
                                                    round_up(sizeof(gcl_eager_owner_t), 64);
    h->total_bytes = round_up(h->off_eager + n * GCL_EAGER_CELLS * h->eager_cell_bytes, 4096);
}

static void bind(gcl_hostbox_t *hb, void *base, size_t size)
{
    const gcl_hostbox_header_t *h = base;
    hb->base = base;
    hb->size = size;
    hb->ipus = (gcl_hostbox_ipu_t *)((char *)base + h->off_ipus);
    hb->slots = (gcl_hostbox_slot_t *)((char *)base + h->off_slots);
    hb->pool = (char *)base + h->off_pool;
    hb->direct = (char *)base + h->off_direct;
    hb->eager = (char *)base + h->off_eager;
    hb->eager_bytes = h->eager_bytes;
    hb->eager_cell_bytes = h->eager_cell_bytes;
    hb->num_ipus = (int)h->num_ipus;
    hb->nslots = (int)h->slots;
    hb->nchunks = (int)h->chunks;
    hb->chunk_bytes = h->chunk_bytes;
    hb->direct_bytes = h->direct_bytes;
}

static void init_contents(gcl_hostbox_t *hb, const uint8_t token[16])
{
    memcpy(((gcl_hostbox_header_t *)hb->base)->token, token, 16);
    uint64_t all = hb->nchunks >= 64 ? ~0ull : (1ull << hb->nchunks) - 1;
    for (int i = 0; i < hb->num_ipus; i++) {
        atomic_init(&hb->ipus[i].free_chunks, all);
        hb->ipus[i].pid = -1;
        hb->ipus[i].instance = -1;
        hb->ipus[i].global_ipu = -1;
    }
    /* Slots start FREE (zero) because new memory is zero. */
}

/* The named segment's window, from its creation to gcl_hostbox_unlink: a job torn down meanwhile
 * (mpirun ends the instances when one fails in gcl_init, with SIGTERM before SIGKILL) must not
 * leave the name behind. SIGTERM, SIGINT and SIGHUP, where they would end the process, unlink it
 * first. One segment per process is guarded: only an instance that leads a host creates one. */
static const int guard_sigs[] = {SIGTERM, SIGINT, SIGHUP};
enum { GUARD_SIGS = sizeof guard_sigs / sizeof guard_sigs[0] };
static char guard_path[96];
static struct sigaction guard_old[GUARD_SIGS];
static int guard_set[GUARD_SIGS];

static void guard_handler(int sig)
{
    int saved = errno;
    if (guard_path[0])
        unlink(guard_path); /* async-signal-safe; shm_open's names live in /dev/shm */
    for (int i = 0; i < GUARD_SIGS; i++)
        if (guard_sigs[i] == sig && guard_set[i]) {
            sigaction(sig, &guard_old[i], NULL);
            guard_set[i] = 0;
        }
    errno = saved;
    raise(sig); /* delivered once this handler returns, to the earlier action */
}

static void guard_name(const char *name)
{
    int guarding = guard_path[0] != '\0';
    snprintf(guard_path, sizeof guard_path, "/dev/shm%s", name);
    if (guarding) /* a second segment (tests): the handlers stay, for the newest name */
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = guard_handler;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < GUARD_SIGS; i++) {
        struct sigaction old;
        guard_set[i] = 0;
        /* Only a signal that would end the process as it is: an ignored one ends nothing,
         * and a program's own handler (a graceful stop) decides for itself. */
        if (sigaction(guard_sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        guard_old[i] = old;
        guard_set[i] = sigaction(guard_sigs[i], &sa, NULL) == 0;
    }
}

static void unguard_name(void)
{
    for (int i = 0; i < GUARD_SIGS; i++) {
        struct sigaction cur;
        /* A handler the program installed meanwhile stays. */
        if (guard_set[i] && sigaction(guard_sigs[i], NULL, &cur) == 0 &&
            !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == guard_handler)
            sigaction(guard_sigs[i], &guard_old[i], NULL);
        guard_set[i] = 0;
    }
    guard_path[0] = '\0';
}

gcl_status_t gcl_hostbox_create(gcl_hostbox_t *hb, const char *name, const uint8_t token[16],
                                int num_ipus, const gcl_hostbox_sizes_t *sizes, char *err,
                                size_t len)
{
    memset(hb, 0, sizeof *hb);
    gcl_hostbox_header_t h;
    memset(&h, 0, sizeof h);
    layout(&h, num_ipus, sizes, name != NULL);
    void *base;
    if (!name) {
        base = gcl_mmap(NULL, h.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                        0);
        if (base == MAP_FAILED) {
            snprintf(err, len, "cannot map %zu bytes for the host box: %s", (size_t)h.total_bytes,
                     strerror(errno));
            return GCL_ERR_NO_HOST_MEMORY;
        }
    } else {
        int fd = gcl_shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            snprintf(err, len, "cannot create shared memory %s: %s", name, strerror(errno));
            return GCL_ERR_SYSTEM;
        }
        snprintf(hb->name, sizeof hb->name, "%s", name);
        guard_name(name);
        /* The segment is sparse: pages cost memory only once a transfer touches them. */
        if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)h.total_bytes) != 0) {
            snprintf(err, len, "cannot size shared memory %s to %zu bytes: %s", name,
                     (size_t)h.total_bytes, strerror(errno));
            close(fd);
            shm_unlink(name);
            unguard_name();
            return GCL_ERR_SYSTEM;
        }
        base = gcl_mmap(NULL, h.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (base == MAP_FAILED) {
            snprintf(err, len, "cannot map shared memory %s: %s", name, strerror(errno));
            shm_unlink(name);
            unguard_name();
            return GCL_ERR_SYSTEM;
        }
    }
    memcpy(base, &h, sizeof h);
    bind(hb, base, h.total_bytes);
    init_contents(hb, token);
    return GCL_OK;
}

gcl_status_t gcl_hostbox_attach(gcl_hostbox_t *hb, const char *name, const uint8_t token[16],
                                char *err, size_t len)
{
    memset(hb, 0, sizeof *hb);
    int fd = gcl_shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(err, len, "cannot open shared memory %s: %s", name, strerror(errno));
        return GCL_ERR_SYSTEM;
    }
    struct stat st;
    gcl_hostbox_header_t h;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
        (size_t)st.st_size < sizeof h || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
        h.magic != GCL_HOSTBOX_MAGIC || memcmp(h.token, token, 16) != 0 ||
        h.total_bytes != (uint64_t)st.st_size) {
        snprintf(err, len, "shared memory %s is not this job's segment (owner, mode or token)",
                 name);
        close(fd);
        return GCL_ERR_SYSTEM;
    }
    void *base = gcl_mmap(NULL, h.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        snprintf(err, len, "cannot map shared memory %s: %s", name, strerror(errno));
        return GCL_ERR_SYSTEM;
    }
    snprintf(hb->name, sizeof hb->name, "%s", name);
    bind(hb, base, h.total_bytes);
    return GCL_OK;
}

void gcl_hostbox_unlink(gcl_hostbox_t *hb)
{
    if (hb->name[0] && !hb->unlinked) {
        shm_unlink(hb->name);
        unguard_name();
    }
    hb->unlinked = 1;
}

void gcl_hostbox_destroy(gcl_hostbox_t *hb)
{
    if (hb->base)
        munmap(hb->base, hb->size);
    memset(hb, 0, sizeof *hb);
}

int gcl_hostbox_free_slot(const gcl_hostbox_t *hb, int src, int dst)
{
    for (int i = 0; i < hb->nslots; i++)
        if (atomic_load_explicit(&gcl_hostbox_slot(hb, src, dst, i)->state, memory_order_acquire) ==
            GCL_SLOT_FREE)
            return i;
    return -1;
}

int gcl_hostbox_claim_slot(const gcl_hostbox_t *hb, int src, int dst, uint64_t key0, uint64_t key1)
{
    for (int i = 0; i < hb->nslots; i++) {
        gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, src, dst, i);
        if (atomic_load_explicit(&s->state, memory_order_acquire) != GCL_SLOT_FULL ||
            s->key0 != key0 || s->key1 != key1)
            continue;
        uint32_t full = GCL_SLOT_FULL;
        if (atomic_compare_exchange_strong(&s->state, &full, GCL_SLOT_BUSY))
            return i;
    }
    return -1;
}

int gcl_hostbox_has_message(const gcl_hostbox_t *hb, int src, int dst, uint64_t key0)
{
    for (int i = 0; i < hb->nslots; i++) {
        gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, src, dst, i);
        uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
        if ((state == GCL_SLOT_FULL || state == GCL_SLOT_BUSY) && s->key0 == key0)
            return 1;
    }
    return 0;
}

void gcl_hostbox_release_slot(gcl_hostbox_t *hb, int src, int dst, int slot)
{
    atomic_store_explicit(&gcl_hostbox_slot(hb, src, dst, slot)->state, GCL_SLOT_FREE,
                          memory_order_release);
    gcl_hostbox_notify(hb, src);
}

void gcl_hostbox_reject_slot(gcl_hostbox_t *hb, int src, int dst, int slot)
{
    atomic_store_explicit(&gcl_hostbox_slot(hb, src, dst, slot)->state, GCL_SLOT_REJECTED,
                          memory_order_release);
    gcl_hostbox_ring(hb, src);
}

int gcl_hostbox_pid_gone(int32_t pid)
{
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

int gcl_hostbox_retract_slot(gcl_hostbox_t *hb, int src, int dst, int slot)
{
    gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, src, dst, slot);
    uint32_t full = GCL_SLOT_FULL, rejected = GCL_SLOT_REJECTED;
    if (atomic_compare_exchange_strong(&s->state, &full, GCL_SLOT_FREE) ||
        atomic_compare_exchange_strong(&s->state, &rejected, GCL_SLOT_FREE))
        return 1;
    /* A receiver is copying out of it right now; it finishes in a bounded time, unless its
     * process died in the middle: then nobody will touch the slot again. */
    for (unsigned spins = 1; atomic_load_explicit(&s->state, memory_order_acquire) == GCL_SLOT_BUSY;
         spins++) {
        if (spins % 1024 == 0 && gcl_hostbox_pid_gone(hb->ipus[dst].pid))
            return 0;
        sched_yield();
    }
    /* It may have rejected the message meanwhile: then it is still ours to free. */
    rejected = GCL_SLOT_REJECTED;
    return atomic_compare_exchange_strong(&s->state, &rejected, GCL_SLOT_FREE);
}

uint32_t gcl_hostbox_take_chunk(gcl_hostbox_t *hb, int ipu)
{
    _Atomic uint64_t *mask = &hb->ipus[ipu].free_chunks;
    uint64_t m = atomic_load(mask);
    while (m) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        if (atomic_compare_exchange_weak(mask, &m, m & ~(1ull << i)))
            return i;
    }
    return GCL_HOSTBOX_NO_CHUNK;
}

void gcl_hostbox_give_chunk(gcl_hostbox_t *hb, int ipu, uint32_t chunk)
{
    atomic_fetch_or(&hb->ipus[ipu].free_chunks, 1ull << chunk);
}
