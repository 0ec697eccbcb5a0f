/* Executing the data side of schedule ops: shared by gcl's executor and coll_run_local. */
#include "coll/reduce.h"
#include "coll/run.h"

#include <string.h>

void coll_exec_local(const coll_op_t *op, void *const bufs[COLL_BUF_COUNT],
                     const coll_exec_info_t *x)
{
    void *dst = coll_buf_at(bufs, op->buf, op->off, x->elem_size);
    switch (op->kind) {
    case COLL_OP_COPY: {
        const void *src = coll_buf_at(bufs, op->src_buf, op->src_off, x->elem_size);
        if (src != dst)
            memmove(dst, src, op->count * x->elem_size);
        break;
    }
    case COLL_OP_REDUCE: {
        const void *src = coll_buf_at(bufs, op->src_buf, op->src_off, x->elem_size);
        if (op->flags & COLL_OPF_SWAP)
            coll_reduce(x->dtype, x->op, dst, src, dst, op->count);
        else
            coll_reduce(x->dtype, x->op, dst, dst, src, op->count);
        break;
    }
    case COLL_OP_DIVIDE:
        coll_divide(x->dtype, dst, op->count, (unsigned)x->nranks);
        break;
    default:
        break;
    }
}

void coll_exec_incoming(const coll_op_t *op, void *const bufs[COLL_BUF_COUNT], const void *data,
                        uint64_t first, uint64_t n, const coll_exec_info_t *x)
{
    void *dst = coll_buf_at(bufs, op->buf, op->off + first, x->elem_size);
    if (op->kind == COLL_OP_RECV) {
        memcpy(dst, data, n * x->elem_size);
        return;
    }
    const void *local = coll_buf_at(bufs, op->src_buf, op->src_off + first, x->elem_size);
    if (op->flags & COLL_OPF_SWAP)
        coll_reduce(x->dtype, x->op, dst, data, local, n);
    else
        coll_reduce(x->dtype, x->op, dst, local, data, n);
}
