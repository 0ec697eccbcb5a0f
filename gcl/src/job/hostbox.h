/*
 * The host box: the memory every IPU thread of one host shares, and the message slots in it.
 *
 * One per host per job. With several instances on a host it is a POSIX shared-memory segment
 * (mode 0600, named with the job's random token, unlinked as soon as every local instance has
 * mapped it); with one instance it is anonymous memory. Both transports inside a host use it:
 * "local" (same process) posts a pointer to the sender's buffer and the receiver reduces straight
 * out of it; "shm" (another process) copies pieces into the sender's staging chunks and the
 * receiver reduces out of those.
 *
 * Layout: header | one gcl_hostbox_ipu_t per IPU of the host | slots | staging chunks.
 * Slots: for each ordered pair (src, dst) of host IPUs, SLOTS message slots. The sender fills a
 * FREE slot and publishes it (state FULL, release); the receiver finds it by key, consumes it and
 * frees it (state FREE, release). Each side rings the other's doorbell, a futex word on which an
 * IPU thread sleeps when it has nothing to do.
 */
#ifndef GCL_HOSTBOX_H
#define GCL_HOSTBOX_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gcl/status.h"
#include "base/vocab/signature.h"
#include "base/wait.h"
#include "job/shmem.h"

/* A slot is FREE, FULL (posted by the sender), BUSY (claimed by the receiver, which is
 * reading it; the sender may retract a FULL slot, never a BUSY one), or REJECTED (the receiver
 * found the message mismatched: the send must not complete as if it had been taken; its sender
 * fails with the receiver's mark and frees the slot when it retracts it). */
enum { GCL_SLOT_FREE = 0, GCL_SLOT_FULL = 1, GCL_SLOT_BUSY = 2, GCL_SLOT_REJECTED = 3 };

/* Life of an IPU thread, as its peers see it. */
enum {
    GCL_IPU_IDLE = 0,     /* not in gcl_run */
    GCL_IPU_RUNNING = 1,  /* running the program of run generation run_gen */
    GCL_IPU_FINISHED = 2, /* returned from the program of run generation run_gen */
    GCL_IPU_FAILED = 3,   /* its program or instance failed */
    GCL_IPU_EXITED = 4,   /* its instance called gcl_finalize, and passed its final barrier */
    GCL_IPU_CLOSING = 5,  /* returned from the program of run_gen, and its instance called
                           * gcl_finalize: it runs no other (set before the final barrier) */
};

#define GCL_HOSTBOX_NO_CHUNK 0xffffffffu

typedef struct {
    alignas(64) _Atomic uint32_t state;
    uint32_t buf;      /* staging chunk index in the sender's pool, or GCL_HOSTBOX_NO_CHUNK */
    uint64_t key0;     /* communicator key << 32 | collective sequence */
    uint64_t key1;     /* message index << 32 | piece index */
    uint64_t offset;   /* bytes of the message before this piece */
    uint64_t bytes;    /* bytes in this piece */
    uint64_t total;    /* bytes in the whole message */
    uint64_t ptr;      /* pointer mode: the data's address in the sender's process */
    uint64_t sim_send; /* simulated: the sender's clock at the send */
    uint64_t sim_time; /* simulated: when the message arrives */
    gcl_sig_t sig;
} gcl_hostbox_slot_t;

typedef struct {
    gcl_doorbell_t bell;
    alignas(64) _Atomic uint64_t free_chunks; /* bit i set: staging chunk i is free */
    /* Its life: the gcl_run it is in (run_gen) << 32 | its GCL_IPU_* state, one word, so that
     * a peer never reads a new run's number beside the last run's state (gcl_hostbox_life). */
    alignas(64) _Atomic uint64_t life;
    int32_t pid, instance, global_ipu;
    _Atomic uint64_t last_call;   /* key0 of the last collective it entered (0: none yet) */
    _Atomic uint64_t last_sig[4]; /* its gcl_sig_t; last_call is 0 while this is rewritten */
    /* Host-direct collectives (direct.c): a barrier epoch, and what the IPU publishes for its
     * peers each round: its buffers (when they share its process), its call and clock. */
    alignas(64) _Atomic uint64_t epoch;
    _Atomic uint64_t d_in, d_out;        /* addresses in the owner's process */
    _Atomic uint64_t d_key;              /* key0 of the call that d_sig and d_clock describe */
    gcl_shmem_ref_t d_in_ref, d_out_ref; /* the buffers as another process can map them */
    uint64_t cma_addr, cma_value; /* start-up: a word peers try to read with process_vm_readv */
    gcl_sig_t d_sig;
    uint64_t d_clock;
    /* A peer that found this IPU's call mismatched leaves the key of the call and the reason
     * here, so that every replica of the call fails with it, not just the two that met. */
    _Atomic uint32_t poison_lock; /* 0, or the pid of the process holding it */
    _Atomic uint64_t poison_key;
    char poison[400];
    char reason[320]; /* why it FAILED, for its peers' error messages */
    /* 1 when it FAILED after another IPU of its instance had (it was aborted, or saw that one's
     * failure): peers then name that IPU, the cause, rather than quote a quote of it. Written
     * before state. */
    int32_t after_other;
    /* 1 when it FAILED as a consequence: the call that failed it failed on a peer's failure
     * or an abort (GCL_ERR_PEER_FAILED, GCL_ERR_ABORTED); 0 for a cause of its own (a call's
     * own error, or the program's return with no call failed). Written before state. */
    int32_t consequence;
} gcl_hostbox_ipu_t;

/*
 * Eager cells (engine/eager.c): each IPU's mailboxes for the small calls of a group that shares
 * the host. The owner publishes a call in one of its GCL_EAGER_CELLS cells: KEY set to 0, then
 * the clock, the signature and the data, then KEY set to the call's key0 (release); every other
 * rank of the call finds it by KEY, reads it, checks that KEY still holds (a seqlock), and acks
 * it by writing key0 into its own word of ACK (rank order). The owner takes a cell again only
 * once every reader of its last call has acked, or has since entered a later call of the same
 * group (the owner saw its cell: then the acks are not read, and stay in the readers' caches),
 * or that call was of an earlier gcl_run. The first 16 bytes of data share the cache line of
 * the key: an 8-byte all_reduce moves one line.
 */
#define GCL_EAGER_CELLS     4
#define GCL_EAGER_MAX_RANKS 64
#define GCL_EAGER_HEAD      48 /* bytes before the data */

typedef struct {
    _Atomic uint64_t key; /* key0 of the call it holds; 0 while it is written */
    uint64_t clock;       /* the owner's simulated clock at entry */
    gcl_sig_t sig;
} gcl_eager_head_t;
_Static_assert(sizeof(gcl_eager_head_t) == GCL_EAGER_HEAD, "the data starts after 48 bytes");

/* What only the owner writes: whom it waits on before it may take the cell again. */
typedef struct {
    uint32_t run_gen;                     /* the gcl_run of the call it holds */
    int32_t n, rank;                      /* its group's size and the owner's rank in it */
    int32_t readers[GCL_EAGER_MAX_RANKS]; /* the global IPU of each rank */
} gcl_eager_owner_t;

typedef struct {
    uint64_t magic;
    uint8_t token[16];
    uint32_t num_ipus, slots, chunks;
    uint64_t chunk_bytes, direct_bytes, eager_bytes, eager_cell_bytes;
    uint64_t off_ipus, off_slots, off_pool, off_direct, off_eager, total_bytes;
} gcl_hostbox_header_t;

/* How big the parts of a host box are. */
typedef struct {
    int slots;           /* message slots per ordered pair */
    int chunks;          /* staging chunks per IPU (shared segments only) */
    size_t chunk_bytes;  /* bytes per staging chunk */
    size_t direct_bytes; /* per IPU, each of the two host-direct regions (shared segments only) */
    size_t eager_bytes;  /* data bytes per eager cell (0: no cells) */
} gcl_hostbox_sizes_t;

typedef struct {
    void *base;
    size_t size;
    gcl_hostbox_ipu_t *ipus;
    gcl_hostbox_slot_t *slots;
    char *pool;
    char *direct;
    char *eager;
    int num_ipus, nslots, nchunks;
    size_t chunk_bytes, direct_bytes;
    size_t eager_bytes, eager_cell_bytes; /* data bytes of a cell; the cell's stride */
    char name[112];                       /* the segment's name, "" for anonymous memory */
    int unlinked;
} gcl_hostbox_t;

/* What the IPU threads of one host share, and what proves they belong to one job. */
typedef struct {
    gcl_hostbox_t hb;
    uint8_t token[16];    /* random per job, secret: proves a peer belongs to the job */
    uint8_t nonce[8];     /* random per job, public: names the shared-memory segments */
    int cma;              /* processes of a host may read and write each other's memory */
    int crowded;          /* more IPU threads of the host may run on this process's cores
                           * than it has: a thread that waits gives its core away
                           * (gcl_instance_open) */
    gcl_peer_maps_t maps; /* other processes' IPU memory mapped here */
} gcl_host_t;

/*
 * Creates the host box for NUM_IPUS IPUs: anonymous memory when NAME is NULL (no staging chunks
 * are needed then), else the shared-memory segment NAME, created exclusively with mode 0600.
 * Returns GCL_OK or GCL_ERR_SYSTEM / GCL_ERR_NO_HOST_MEMORY with a sentence in ERR.
 */
gcl_status_t gcl_hostbox_create(gcl_hostbox_t *hb, const char *name, const uint8_t token[16],
                                int num_ipus, const gcl_hostbox_sizes_t *sizes, char *err,
                                size_t len);
/* Maps the segment NAME created by another instance of the job, checking the token. */
gcl_status_t gcl_hostbox_attach(gcl_hostbox_t *hb, const char *name, const uint8_t token[16],
                                char *err, size_t len);
/* Removes the segment's name (the memory lives on while mapped). Idempotent. */
void gcl_hostbox_unlink(gcl_hostbox_t *hb);
void gcl_hostbox_destroy(gcl_hostbox_t *hb);

static inline gcl_hostbox_slot_t *gcl_hostbox_slot(const gcl_hostbox_t *hb, int src, int dst, int i)
{
    return &hb->slots[((size_t)dst * (size_t)hb->num_ipus + (size_t)src) * (size_t)hb->nslots +
                      (size_t)i];
}

static inline char *gcl_hostbox_chunk(const gcl_hostbox_t *hb, int ipu, uint32_t chunk)
{
    return hb->pool + ((size_t)ipu * (size_t)hb->nchunks + chunk) * hb->chunk_bytes;
}

/* IPU's host-direct region WHICH (0: inputs, 1: results), direct_bytes long; NULL without. */
static inline char *gcl_hostbox_direct(const gcl_hostbox_t *hb, int ipu, int which)
{
    return hb->direct_bytes ? hb->direct + ((size_t)ipu * 2 + (size_t)which) * hb->direct_bytes
                            : NULL;
}

/* IPU's eager cell I: its head (the data follows it), its acks and its owner's record. */
static inline gcl_eager_head_t *gcl_hostbox_eager(const gcl_hostbox_t *hb, int ipu, int i)
{
    return (gcl_eager_head_t *)(hb->eager +
                                ((size_t)ipu * GCL_EAGER_CELLS + (size_t)i) * hb->eager_cell_bytes);
}

static inline char *gcl_eager_data(gcl_eager_head_t *h)
{
    return (char *)h + GCL_EAGER_HEAD;
}

static inline _Atomic uint64_t *gcl_eager_acks(const gcl_hostbox_t *hb, gcl_eager_head_t *h)
{
    size_t at = (GCL_EAGER_HEAD + hb->eager_bytes + 63) / 64 * 64;
    return (_Atomic uint64_t *)((char *)h + at);
}

static inline gcl_eager_owner_t *gcl_eager_owner(const gcl_hostbox_t *hb, gcl_eager_head_t *h)
{
    return (gcl_eager_owner_t *)(gcl_eager_acks(hb, h) + GCL_EAGER_MAX_RANKS);
}

/* Wakes IPU's thread if it sleeps, and counts the ring (news its work does not show). */
/* An IPU's life word, and its two halves. The state and the run it belongs to were two words:
 * an IPU starting its next run wrote the run's number, then RUNNING, and a peer that read
 * between the two took it for one that had returned from the new run without making the call
 * the peer waited in ("returned from its program without making this call"; seen once in CI,
 * 40 runs in a row on 4 instances beside another job). */
static inline uint64_t gcl_life(uint32_t run_gen, uint32_t state)
{
    return (uint64_t)run_gen << 32 | state;
}

static inline uint32_t gcl_life_state(uint64_t life)
{
    return (uint32_t)life;
}

static inline uint32_t gcl_life_gen(uint64_t life)
{
    return (uint32_t)(life >> 32);
}

static inline uint64_t gcl_hostbox_life(const gcl_hostbox_ipu_t *p)
{
    return atomic_load_explicit(&p->life, memory_order_acquire);
}

static inline uint32_t gcl_hostbox_state(const gcl_hostbox_ipu_t *p)
{
    return gcl_life_state(gcl_hostbox_life(p));
}

/* Sets P's state, keeping its run. Only P's own IPU thread writes its life (its instance
 * once that thread has ended), so the word read is the word replaced. */
static inline void gcl_hostbox_set_state(gcl_hostbox_ipu_t *p, uint32_t state)
{
    uint64_t was = atomic_load(&p->life);
    atomic_store(&p->life, gcl_life(gcl_life_gen(was), state));
}

static inline void gcl_hostbox_ring(gcl_hostbox_t *hb, int ipu)
{
    gcl_doorbell_ring(&hb->ipus[ipu].bell);
}

/* Rings IPU's thread for news only its checks find: it checks at once (gcl_doorbell_alarm). */
static inline void gcl_hostbox_alarm(gcl_hostbox_t *hb, int ipu)
{
    gcl_doorbell_alarm(&hb->ipus[ipu].bell);
}

/* Wakes IPU's thread if it sleeps or is about to, for news its progress pass reads in the host
 * box (gcl_doorbell_notify). */
static inline void gcl_hostbox_notify(gcl_hostbox_t *hb, int ipu)
{
    gcl_doorbell_notify(&hb->ipus[ipu].bell);
}
/* Whether process PID is gone (a peer that died while it held something in the host box). */
int gcl_hostbox_pid_gone(int32_t pid);

/* A FREE slot from SRC to DST, or -1 when all are in flight. */
int gcl_hostbox_free_slot(const gcl_hostbox_t *hb, int src, int dst);
/* Claims (FULL -> BUSY) the slot from SRC to DST with these keys; returns it, or -1. */
int gcl_hostbox_claim_slot(const gcl_hostbox_t *hb, int src, int dst, uint64_t key0, uint64_t key1);
/* Whether SRC has posted anything to DST for the call KEY0 that DST has not taken yet. */
int gcl_hostbox_has_message(const gcl_hostbox_t *hb, int src, int dst, uint64_t key0);
/* Releases a claimed slot (BUSY -> FREE) and rings the sender SRC. */
void gcl_hostbox_release_slot(gcl_hostbox_t *hb, int src, int dst, int slot);
/* Rejects a claimed slot whose message was mismatched (BUSY -> REJECTED) and rings SRC. */
void gcl_hostbox_reject_slot(gcl_hostbox_t *hb, int src, int dst, int slot);
/* Takes back a posted slot that nobody claimed (FULL -> FREE) or that its receiver rejected
 * (REJECTED -> FREE), waiting out a receiver that is reading it. Returns 1 if it was retracted,
 * 0 if the receiver had consumed it. */
int gcl_hostbox_retract_slot(gcl_hostbox_t *hb, int src, int dst, int slot);
/* Takes a free staging chunk of IPU, or returns GCL_HOSTBOX_NO_CHUNK. */
uint32_t gcl_hostbox_take_chunk(gcl_hostbox_t *hb, int ipu);
void gcl_hostbox_give_chunk(gcl_hostbox_t *hb, int ipu, uint32_t chunk);

#endif /* GCL_HOSTBOX_H */
