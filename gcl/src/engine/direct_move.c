/*
 * Host-direct collectives, the data movement: folding slices and blocks out of peers' buffers
 * and writing results into them, by pointer, by process_vm_readv/writev, or through the staging
 * regions of the host box. See direct.c for the protocol.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "coll/canon.h"
#include "coll/reduce.h"
#include "engine/direct_move.h"

/* ---- reaching a peer ---- */

static const gcl_direct_t *dir(const gcl_exec_t *x)
{
    return &x->direct;
}

static int is_me(const gcl_exec_t *x, int q)
{
    return q == x->peers->rank;
}

/* Reports a failed single copy: a peer that vanished, or one the kernel will not let us touch. */
static gcl_status_t cma_failed(gcl_exec_t *x, int q, int err)
{
    char who[160];
    gcl_job_describe_ipu(x->peers->ipu->job, x->peers->ipus[q], who, sizeof who);
    return gcl_err_set(x->err, err == ESRCH ? GCL_ERR_PEER_FAILED : GCL_ERR_TRANSPORT,
                       "copying from or to %s failed: %s", who, strerror(err));
}

/* BYTES from rank Q's address SRC (in Q's process) into local DST. */
static gcl_status_t peer_read(gcl_exec_t *x, int q, void *dst, uint64_t src, size_t bytes)
{
    if (dir(x)->mode == GCL_DIRECT_POINTER || is_me(x, q)) {
        memcpy(dst, (const void *)(uintptr_t)src, bytes);
        return GCL_OK;
    }
    pid_t pid = gcl_direct_box(x, q)->pid;
    for (size_t done = 0; done < bytes;) {
        struct iovec l = {(char *)dst + done, bytes - done};
        struct iovec r = {(void *)(uintptr_t)(src + done), bytes - done};
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0)
            return cma_failed(x, q, n < 0 ? errno : EIO);
        done += (size_t)n;
    }
    return GCL_OK;
}

#if defined(__x86_64__)
#include <emmintrin.h>

/* A copy whose stores bypass the cache: the results written into the ranks' outputs are not read
 * again soon, and streaming stores spare the memory the read-for-ownership of every line. */
static void stream_copy(char *dst, const char *src, size_t n)
{
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    if (n < 4096 || head > n) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(dst, src, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    memcpy(dst + i, src + i, n - i);
    _mm_sfence();
}
#else
static void stream_copy(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

/* BYTES from local SRC to rank Q's address DST (in Q's process). */
static gcl_status_t peer_write(gcl_exec_t *x, int q, uint64_t dst, const void *src, size_t bytes)
{
    if (dir(x)->mode == GCL_DIRECT_POINTER || is_me(x, q)) {
        if ((const void *)(uintptr_t)dst != src)
            stream_copy((char *)(uintptr_t)dst, src, bytes);
        return GCL_OK;
    }
    pid_t pid = gcl_direct_box(x, q)->pid;
    for (size_t done = 0; done < bytes;) {
        struct iovec l = {(char *)src + done, bytes - done};
        struct iovec r = {(void *)(uintptr_t)(dst + done), bytes - done};
        ssize_t n = process_vm_writev(pid, &l, 1, &r, 1, 0);
        if (n <= 0)
            return cma_failed(x, q, n < 0 ? errno : EIO);
        done += (size_t)n;
    }
    return GCL_OK;
}

/* Elements of rank Q's input and output buffers, as the collective lays them out. */
static void extents(const gcl_exec_t *x, uint64_t *in, uint64_t *out)
{
    uint64_t n = (uint64_t)x->peers->size, c = x->direct.count;
    *in = x->direct.coll == COLL_REDUCE_SCATTER ? n * c : c;
    *out = x->direct.coll == COLL_ALLGATHER ? n * c : c;
}

/* REF's buffer of BYTES mapped into this process, or NULL. */
static char *map_ref(const gcl_exec_t *x, const gcl_shmem_ref_t *ref, uint64_t bytes)
{
    if (ref->fd < 0 || ref->off + bytes > ref->size)
        return NULL;
    return gcl_shmem_peer(&x->peers->ipu->host->maps, ref);
}

void gcl_direct_map_peers(gcl_exec_t *x)
{
    uint64_t in, out;
    size_t es = x->info.elem_size;
    extents(x, &in, &out);
    for (int q = 0; q < x->peers->size; q++) {
        gcl_hostbox_ipu_t *b = gcl_direct_box(x, q);
        if (dir(x)->mode == GCL_DIRECT_POINTER || is_me(x, q)) {
            x->direct.in_at[q] = (char *)(uintptr_t)atomic_load(&b->d_in);
            x->direct.out_at[q] = (char *)(uintptr_t)atomic_load(&b->d_out);
        } else if (dir(x)->mode == GCL_DIRECT_CMA) {
            gcl_shmem_ref_t ri = b->d_in_ref, ro = b->d_out_ref;
            x->direct.in_at[q] = map_ref(x, &ri, in * es);
            x->direct.out_at[q] = map_ref(x, &ro, out * es);
        }
    }
}

static uint64_t addr_in(const gcl_exec_t *x, int q, uint64_t elem)
{
    return atomic_load(&gcl_direct_box(x, q)->d_in) + elem * x->info.elem_size;
}

static uint64_t addr_out(const gcl_exec_t *x, int q, uint64_t elem)
{
    return atomic_load(&gcl_direct_box(x, q)->d_out) + elem * x->info.elem_size;
}

/* ---- the folding space ---- */

/* The tree's scratch slots, then the result, then a copy of each operand that is read with
 * process_vm_readv: coll_canon_depth(n) + 1 + n pieces. A piece is 64 KiB (the accumulators of
 * every IPU thread of a host then stay in its caches), less for groups so large that the copies
 * would not fit in 4 MiB. */
uint64_t gcl_direct_piece(const gcl_exec_t *x)
{
    size_t es = x->info.elem_size, pieces = (size_t)(coll_canon_depth(x->peers->size) + 1);
    if (x->direct.mode == GCL_DIRECT_CMA)
        pieces += (size_t)x->peers->size;
    size_t bytes = ((size_t)4 << 20) / pieces;
    bytes = bytes > GCL_DIRECT_ACC_BYTES ? GCL_DIRECT_ACC_BYTES : bytes < 4096 ? 4096 : bytes;
    return bytes / es ? bytes / es : 1;
}

size_t gcl_direct_acc_bytes(const gcl_exec_t *x)
{
    size_t pieces = (size_t)(coll_canon_depth(x->peers->size) + 1) +
                    (x->direct.mode == GCL_DIRECT_CMA ? (size_t)x->peers->size : 0);
    return pieces * gcl_direct_piece(x) * x->info.elem_size;
}

static char *result_at(const gcl_exec_t *x)
{
    return dir(x)->acc +
           (size_t)coll_canon_depth(x->peers->size) * gcl_direct_piece(x) * x->info.elem_size;
}

/* Finishes the fold of N elements whose operands are in dir(x)->leaves: the tree into the
 * result piece, and a MEAN's division. */
static void fold_leaves(gcl_exec_t *x, uint64_t n)
{
    char *res = result_at(x);
    coll_canon_fold(x->info.dtype, x->info.op, res, dir(x)->leaves, x->peers->size, n, dir(x)->acc);
    if (x->info.op == COLL_MEAN)
        coll_divide(x->info.dtype, res, n, (unsigned)x->peers->size);
}

/*
 * The result piece = the fold along the canonical tree of every rank's input elements
 * [first, first + n), n at most a piece. By pointer, or mapped, the fold reads the peers' inputs
 * in place; otherwise each is read into its copy first.
 */
static gcl_status_t fold_inputs(gcl_exec_t *x, uint64_t first, uint64_t n)
{
    size_t es = x->info.elem_size, bytes = n * es;
    char *copies = result_at(x) + gcl_direct_piece(x) * es;
    for (int q = 0; q < x->peers->size; q++) {
        if (dir(x)->in_at[q]) { /* mapped: fold straight out of it */
            dir(x)->leaves[q] = dir(x)->in_at[q] + first * es;
            continue;
        }
        char *copy = copies + (size_t)q * gcl_direct_piece(x) * es;
        GCL_CHECK(peer_read(x, q, copy, addr_in(x, q, first), bytes));
        dir(x)->leaves[q] = copy;
    }
    fold_leaves(x, n);
    return GCL_OK;
}

/* ---- in place (pointer and cma): one round, the whole vector ---- */

static gcl_status_t work_allreduce(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    size_t es = x->info.elem_size, per = gcl_direct_piece(x);
    uint64_t off, len;
    coll_block(x->direct.count, c->size, c->rank, &off, &len);
    for (uint64_t i = 0; i < len; i += per) {
        uint64_t n = len - i < per ? len - i : per;
        GCL_CHECK(fold_inputs(x, off + i, n));
        /* Straight into every rank's output, starting with the next rank's so that the ranks
         * do not all write to the same one at once. */
        for (int k = 1; k <= c->size; k++) {
            int q = (c->rank + k) % c->size;
            if (dir(x)->out_at[q])
                stream_copy(dir(x)->out_at[q] + (off + i) * es, result_at(x), n * es);
            else
                GCL_CHECK(peer_write(x, q, addr_out(x, q, off + i), result_at(x), n * es));
        }
    }
    return GCL_OK;
}

static gcl_status_t work_reduce_scatter(gcl_exec_t *x)
{
    size_t es = x->info.elem_size, per = gcl_direct_piece(x);
    uint64_t count = x->direct.count, block = (uint64_t)x->peers->rank * count;
    char *out = x->bufs[COLL_BUF_OUT];
    for (uint64_t i = 0; i < count; i += per) {
        uint64_t n = count - i < per ? count - i : per;
        GCL_CHECK(fold_inputs(x, block + i, n));
        memcpy(out + i * es, result_at(x), n * es);
    }
    return GCL_OK;
}

static gcl_status_t work_all_gather(gcl_exec_t *x)
{
    size_t es = x->info.elem_size;
    uint64_t count = x->direct.count;
    char *out = x->bufs[COLL_BUF_OUT];
    for (int k = 0; k < x->peers->size; k++) {
        int q = (x->peers->rank + k) % x->peers->size;
        char *dst = out + (uint64_t)q * count * es;
        if (is_me(x, q) && (const void *)(uintptr_t)addr_in(x, q, 0) == dst)
            continue; /* in place */
        if (dir(x)->in_at[q])
            memcpy(dst, dir(x)->in_at[q], count * es);
        else
            GCL_CHECK(peer_read(x, q, dst, addr_in(x, q, 0), count * es));
    }
    return GCL_OK;
}

/* ---- staged: rounds through the host box ---- */

static uint64_t round_lo(const gcl_exec_t *x)
{
    return x->direct.round * x->direct.per_round;
}

uint64_t gcl_direct_round_len(const gcl_exec_t *x)
{
    uint64_t lo = round_lo(x), end = lo + x->direct.per_round;
    return (end < x->direct.count ? end : x->direct.count) - lo;
}

/* Rank Q's region WHICH (0: inputs, in the half the round's parity picks; 1: results). */
char *gcl_direct_region(const gcl_exec_t *x, int q, int which)
{
    const gcl_ipu_t *me = x->peers->ipu;
    char *base =
        gcl_hostbox_direct(&me->host->hb, me->job->ipu_hostlocal[x->peers->ipus[q]], which);
    return which == 0 ? base + (x->direct.round % 2) * (me->host->hb.direct_bytes / 2) : base;
}

/* Where element OFF of block B of rank Q's staged input is during this round. */
static const char *staged_input(const gcl_exec_t *x, int q, uint64_t b, uint64_t off)
{
    return gcl_direct_region(x, q, 0) +
           (b * gcl_direct_round_len(x) + off - round_lo(x)) * x->info.elem_size;
}

/* DST = the fold along the canonical tree of block B of every staged input at elements
 * [off, off + n). */
static void fold_staged(gcl_exec_t *x, char *dst, uint64_t b, uint64_t off, uint64_t n)
{
    size_t es = x->info.elem_size, per = gcl_direct_piece(x);
    for (uint64_t i = 0; i < n; i += per) {
        uint64_t m = n - i < per ? n - i : per;
        for (int q = 0; q < x->peers->size; q++)
            dir(x)->leaves[q] = staged_input(x, q, b, off + i);
        fold_leaves(x, m);
        memcpy(dst + i * es, result_at(x), m * es);
    }
}

static void work_staged(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    size_t es = x->info.elem_size;
    char *out = x->bufs[COLL_BUF_OUT];
    uint64_t lo = round_lo(x), len = gcl_direct_round_len(x), off, n;
    if (x->direct.coll == COLL_ALLREDUCE) {
        coll_block(len, c->size, c->rank, &off, &n);
        fold_staged(x, gcl_direct_region(x, c->rank, 1) + off * es, 0, lo + off, n);
    } else if (x->direct.coll == COLL_REDUCE_SCATTER) {
        fold_staged(x, out + lo * es, (uint64_t)c->rank, lo, len);
    } else {
        for (int q = 0; q < c->size; q++)
            memcpy(out + ((uint64_t)q * x->direct.count + lo) * es, staged_input(x, q, 0, lo),
                   len * es);
    }
}

void gcl_direct_gather(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    size_t es = x->info.elem_size;
    char *out = x->bufs[COLL_BUF_OUT];
    uint64_t lo = round_lo(x), len = gcl_direct_round_len(x), off, n;
    for (int q = 0; q < c->size; q++) {
        coll_block(len, c->size, q, &off, &n);
        if (n > 0)
            memcpy(out + (lo + off) * es, gcl_direct_region(x, q, 1) + off * es, n * es);
    }
}

gcl_status_t gcl_direct_work(gcl_exec_t *x)
{
    if (dir(x)->mode == GCL_DIRECT_STAGED) {
        work_staged(x);
        return GCL_OK;
    }
    switch (x->direct.coll) {
    case COLL_ALLREDUCE:
        return work_allreduce(x);
    case COLL_REDUCE_SCATTER:
        return work_reduce_scatter(x);
    default:
        return work_all_gather(x);
    }
}
