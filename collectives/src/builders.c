/* Helpers shared by the schedule builders; see builders.h. */
#include "builders.h"

int coll_pof2_floor(int n)
{
    int p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

int coll_log2_floor(int n)
{
    int k = 0;
    while ((2 << k) <= n)
        k++;
    return k;
}

int coll_log2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

void coll_pof2_init(coll_pof2_t *f, int n, int rank)
{
    f->p = coll_pof2_floor(n);
    f->extra = n - f->p;
    if (rank < 2 * f->extra)
        f->newrank = rank % 2 ? rank / 2 : -1;
    else
        f->newrank = rank - f->extra;
}

int coll_pof2_rank(const coll_pof2_t *f, int nr)
{
    return nr < f->extra ? 2 * nr + 1 : nr + f->extra;
}

void coll_pof2_fold_in(coll_schedule_t *s, const coll_pof2_t *f, int rank, coll_buf_t acc,
                       uint64_t len)
{
    if (rank >= 2 * f->extra)
        return;
    coll_step(s);
    if (f->newrank < 0)
        coll_send(s, rank + 1, COLL_BUF_IN, 0, len);
    else
        coll_recv_reduce(s, rank - 1, acc, 0, COLL_BUF_IN, 0, len, COLL_OPF_SWAP);
}

void coll_pof2_fold_out(coll_schedule_t *s, const coll_pof2_t *f, int rank, coll_buf_t from,
                        uint64_t from_off, uint64_t len)
{
    if (rank >= 2 * f->extra)
        return;
    coll_step(s);
    if (f->newrank < 0)
        coll_recv(s, rank + 1, COLL_BUF_OUT, 0, len);
    else
        coll_send(s, rank - 1, from, from_off, len);
}

void coll_exchange_blocks(coll_schedule_t *s, int n, int rank, uint64_t count)
{
    s->tmp_count = (uint64_t)(n - 1) * count;
    coll_step(s);
    for (int q = 0; q < n; q++) {
        if (q == rank)
            continue;
        coll_send(s, q, COLL_BUF_IN, (uint64_t)q * count, count);
        coll_recv(s, q, COLL_BUF_TMP, (uint64_t)(q < rank ? q : q - 1) * count, count);
    }
}

void coll_block_range(uint64_t count, int nblocks, int lo, int w, uint64_t *off, uint64_t *len)
{
    uint64_t end, last;
    coll_block(count, nblocks, lo, off, len);
    if (w <= 0) {
        *len = 0;
        return;
    }
    coll_block(count, nblocks, lo + w - 1, &end, &last);
    *len = end + last - *off;
}

int coll_nsegments(const coll_args_t *a, uint64_t len)
{
    size_t chunk = a->chunk_bytes ? a->chunk_bytes : COLL_CHUNK_BYTES;
    size_t es = a->elem_size ? a->elem_size : 1;
    uint64_t per = chunk / es ? chunk / es : 1;
    uint64_t nseg = (len + per - 1) / per;
    if (nseg < 1)
        return 1;
    return nseg > COLL_MAX_SEGMENTS ? COLL_MAX_SEGMENTS : (int)nseg;
}

void coll_fold_ranks(coll_schedule_t *s, int n, int rank, uint64_t out_off, coll_buf_t own,
                     uint64_t own_off, uint64_t tmp_off, uint64_t tmp_stride, uint64_t len)
{
    /* Rank 0 starts from its own data; any other rank folds ranks 0 .. rank-1 in TMP slot 0
     * (rank 0's), then brings in its own contribution, which OUT may alias. */
    if (rank == 0) {
        coll_copy(s, COLL_BUF_OUT, out_off, own, own_off, len);
    } else {
        for (int q = 1; q < rank; q++)
            coll_reduce_op(s, COLL_BUF_TMP, tmp_off, COLL_BUF_TMP,
                           tmp_off + (uint64_t)q * tmp_stride, len, 0);
        coll_copy(s, COLL_BUF_OUT, out_off, own, own_off, len);
        coll_reduce_op(s, COLL_BUF_OUT, out_off, COLL_BUF_TMP, tmp_off, len, COLL_OPF_SWAP);
    }
    for (int q = rank + 1; q < n; q++)
        coll_reduce_op(s, COLL_BUF_OUT, out_off, COLL_BUF_TMP,
                       tmp_off + (uint64_t)(q - 1) * tmp_stride, len, 0);
}

uint64_t coll_canon_tmp(int n, uint64_t stride)
{
    return (uint64_t)(n + coll_canon_depth(n)) * stride;
}

void coll_canon_fold_ops(coll_schedule_t *s, int n, coll_redop_t op, uint64_t out_off,
                         uint64_t tmp_off, uint64_t stride, uint64_t len)
{
    enum { INSN_MAX = 1024 };
    coll_canon_insn_t insn[INSN_MAX];
    int nslots;
    if (n - 1 > INSN_MAX) { /* groups this large build their ops in pieces of the tree */
        s->failed = 1;
        return;
    }
    int k = coll_canon_program(n, insn, &nslots);
    if (k == 0)
        coll_copy(s, COLL_BUF_OUT, out_off, COLL_BUF_TMP, tmp_off, len);
    for (int i = 0; i < k; i++) {
        /* Where an operand code lives: a leaf or a scratch slot in TMP, or the result in OUT. */
        coll_buf_t db = insn[i].dst == COLL_CANON_RESULT ? COLL_BUF_OUT : COLL_BUF_TMP;
        uint64_t doff = insn[i].dst == COLL_CANON_RESULT
                            ? out_off
                            : tmp_off + (uint64_t)(n - 1 - insn[i].dst) * stride;
        uint64_t loff = insn[i].left >= 0 ? tmp_off + (uint64_t)insn[i].left * stride
                                          : tmp_off + (uint64_t)(n - 1 - insn[i].left) * stride;
        uint64_t roff = insn[i].right >= 0 ? tmp_off + (uint64_t)insn[i].right * stride
                                           : tmp_off + (uint64_t)(n - 1 - insn[i].right) * stride;
        if (!(db == COLL_BUF_TMP && doff == loff))
            coll_copy(s, db, doff, COLL_BUF_TMP, loff, len);
        coll_reduce_op(s, db, doff, COLL_BUF_TMP, roff, len, 0);
    }
    if (op == COLL_MEAN)
        coll_divide_op(s, COLL_BUF_OUT, out_off, len);
}
