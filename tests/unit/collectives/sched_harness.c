#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_harness.h"

int harness_build(harness_t *h, const coll_algo_t *algo, coll_args_t args, int in_place,
                  void (*fill)(int rank, void *in, uint64_t count, const coll_args_t *a))
{
    int n = args.nranks;
    memset(h, 0, sizeof *h);
    h->n = n;
    h->scheds = calloc((size_t)n, sizeof *h->scheds);
    h->ptrs = calloc((size_t)n, sizeof *h->ptrs);
    h->bufs = calloc((size_t)n, sizeof *h->bufs);
    h->allocs = calloc((size_t)n, sizeof *h->allocs);
    assert_true(h->scheds && h->ptrs && h->bufs && h->allocs);
    for (int r = 0; r < n; r++) {
        coll_args_t a = args;
        a.rank = r;
        const char *why = NULL;
        coll_schedule_init(&h->scheds[r]);
        h->ptrs[r] = &h->scheds[r];
        int rc = coll_build(algo, &a, &h->scheds[r], &why);
        if (rc == -22 /* EINVAL: not supported */) {
            harness_free(h);
            return -1;
        }
        assert_int_equal(rc, 0);
        char err[256];
        if (coll_schedule_validate(&h->scheds[r], err, sizeof err) != 0)
            fail_msg("%s n=%d rank=%d count=%llu: %s", algo->name, n, r,
                     (unsigned long long)args.count, err);
        const coll_schedule_t *s = &h->scheds[r];
        size_t es = args.elem_size;
        uint64_t span = s->in_alias + s->in_count > s->out_alias + s->out_count
                            ? s->in_alias + s->in_count
                            : s->out_alias + s->out_count;
        if (in_place) {
            char *base = h->allocs[r][0] = calloc(span + 1, es);
            h->bufs[r][COLL_BUF_IN] = base + s->in_alias * es;
            h->bufs[r][COLL_BUF_OUT] = base + s->out_alias * es;
        } else {
            h->bufs[r][COLL_BUF_IN] = h->allocs[r][0] = calloc(s->in_count + 1, es);
            h->bufs[r][COLL_BUF_OUT] = h->allocs[r][1] = calloc(s->out_count + 1, es);
        }
        h->bufs[r][COLL_BUF_TMP] = h->allocs[r][2] = calloc(s->tmp_count + 1, es);
        fill(r, h->bufs[r][COLL_BUF_IN], s->in_count, &a);
    }
    return 0;
}

void harness_run(harness_t *h, coll_args_t args)
{
    coll_exec_info_t x = {args.dtype, args.op, args.elem_size, args.nranks};
    char why[256];
    if (coll_run_local(h->ptrs, (void *const(*)[COLL_BUF_COUNT])h->bufs, h->n, &x, why,
                       sizeof why) != 0)
        fail_msg("%s n=%d count=%llu: %s", h->scheds[0].algo, h->n, (unsigned long long)args.count,
                 why);
}

void *harness_out(harness_t *h, int r)
{
    return h->bufs[r][COLL_BUF_OUT];
}

void harness_free(harness_t *h)
{
    for (int r = 0; r < h->n; r++) {
        for (int i = 0; h->allocs && i < 3; i++)
            free(h->allocs[r][i]);
        coll_schedule_free(&h->scheds[r]);
    }
    free(h->scheds);
    free(h->ptrs);
    free(h->bufs);
    free(h->allocs);
    memset(h, 0, sizeof *h);
}
