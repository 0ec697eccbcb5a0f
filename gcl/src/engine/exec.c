/*
 * The state of one call in flight: starting it and freeing what it holds; see exec.h.
 */
#include "engine/exec.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* The message counts of X: its own, or its group's (zeroed) when it borrows them. */
static int counts(gcl_exec_t *x, gcl_peers_t *peers, int borrow)
{
    size_t n = (size_t)peers->size;
    if (!borrow) {
        x->sent = gcl_calloc(2 * n, sizeof *x->sent);
        x->recvd = x->sent ? x->sent + n : NULL;
        return x->sent != NULL;
    }
    gcl_group_scratch_t *g = &peers->scratch;
    if (!g->counts && !(g->counts = gcl_malloc(2 * n * sizeof *g->counts)))
        return 0;
    x->lent = g;
    memset(g->counts, 0, 2 * n * sizeof *g->counts);
    x->sent = g->counts;
    x->recvd = g->counts + n;
    x->xfers = g->xfers;
    x->xcap = g->xcap;
    return 1;
}

/* Zeroes N bytes at P by the C library's memset. With the size a constant, GCC writes `rep stos`
 * in its place, whose start-up cost a small blocking call 10-18 ns here for the 536 bytes of its
 * gcl_exec_t (rdtsc around it, 20,000 calls); the library's vector stores take a third of it. */
__attribute__((noipa)) static void zero(void *p, size_t n)
{
    memset(p, 0, n);
}

gcl_status_t gcl_exec_start(gcl_exec_t *x, const struct gcl_engine *engine, gcl_peers_t *peers,
                            const coll_schedule_t *sched, const void *in, void *out,
                            const gcl_sig_t *sig, uint64_t key, const char *what, gcl_err_t *err,
                            int borrow)
{
    zero(x, sizeof *x);
    x->engine = engine;
    x->peers = peers;
    x->err = err;
    x->sched = sched;
    x->sig = *sig;
    x->what = what;
    x->key0 = key;
    const gcl_ipu_t *me = peers->ipu;
    /* Phantom mode moves no data for calls whose output is NULL (sizes only); calls with real
     * buffers (a benchmark's timings, a checksum) still move theirs. */
    const void *data = out ? out : in;
    x->phantom = me->phantom && (!data || gcl_sim_is_phantom(me->sim, data));
    x->info = (coll_exec_info_t){(coll_dtype_t)sig->dtype, (coll_redop_t)sig->op,
                                 coll_dtype_size((coll_dtype_t)sig->dtype), peers->size};
    x->bufs[COLL_BUF_IN] = (void *)in;
    x->bufs[COLL_BUF_OUT] = out;
    int ok = counts(x, peers, borrow);
    if (ok && x->sched->tmp_count > 0)
        x->bufs[COLL_BUF_TMP] = x->tmp_alloc = gcl_malloc(x->sched->tmp_count * x->info.elem_size);
    if (!ok || (x->sched->tmp_count > 0 && !x->tmp_alloc)) {
        gcl_exec_finish(x);
        return gcl_err_set(err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", what);
    }
    return GCL_OK;
}

/* free(), without the call when there is nothing to free: a blocking call's end passes here
 * with every pointer NULL, and nine calls of free(NULL) cost it 20-35 ns, a tenth of a small
 * call (docs/benchmarks.md). */
static inline void drop(void *p)
{
    if (p)
        free(p);
}

/* Frees what a call's simulated time holds (its entries are its group's when LENT). */
static void simplan_free(gcl_simplan_t *p, int lent)
{
    drop(p->mult_own);
    if (!lent) {
        drop(p->entry);
        drop(p->seen);
    }
    p->mult_own = NULL;
    p->entry = NULL;
    p->seen = NULL;
}

void gcl_exec_finish(gcl_exec_t *x)
{
    if (x->engine && x->engine->finish)
        x->engine->finish(x);
    for (uint32_t i = 0; i < x->nxfers; i++)
        if (!x->xfers[i].done && x->xfers[i].tp->cancel)
            x->xfers[i].tp->cancel(&x->xfers[i]);
    if (x->lent) { /* the group keeps them for its next blocking call */
        x->lent->xfers = x->xfers;
        x->lent->xcap = x->xcap;
    } else {
        drop(x->xfers);
        drop(x->sent);
    }
    drop(x->tmp_alloc);
    simplan_free(&x->sim, x->lent != NULL);
    x->lent = NULL;
    if (x->direct.acc || x->direct.leaves || x->direct.in_at) {
        free(x->direct.acc);
        free(x->direct.leaves);
        free(x->direct.in_at);
        memset(&x->direct, 0, sizeof x->direct);
    }
    x->xfers = NULL;
    x->nxfers = x->xcap = 0;
    x->sent = x->recvd = NULL;
    x->tmp_alloc = NULL;
}
