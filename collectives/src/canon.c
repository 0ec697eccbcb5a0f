/* The canonical reduction order; see coll/canon.h. */
#include "coll/canon.h"

#include <string.h>

#include "coll/reduce.h"

int coll_canon_split(int lo, int hi)
{
    int p = 1;
    while (2 * p < hi - lo)
        p *= 2;
    return lo + p;
}

int coll_canon_depth(int n)
{
    int d = 0;
    while ((1 << d) < n)
        d++;
    return d;
}

typedef struct {
    coll_canon_insn_t *insn;
    int n, used, free_mask, slots;
} program_t;

static int take_slot(program_t *p)
{
    int s = 0;
    while (p->free_mask & (1 << s))
        s++;
    p->free_mask |= 1 << s;
    if (s + 1 > p->slots)
        p->slots = s + 1;
    return -1 - s;
}

static void give_slot(program_t *p, int code)
{
    if (code < 0)
        p->free_mask &= ~(1 << (-1 - code));
}

/* Emits the operations of [lo, hi) and returns the operand code that holds its value. A node's
 * value goes into its left operand's slot when that is one, else into a fresh slot: so the
 * right subtree is evaluated while at most one slot per level above it is held. */
static int emit(program_t *p, int lo, int hi, int is_root)
{
    if (hi - lo == 1)
        return lo;
    int m = coll_canon_split(lo, hi);
    int left = emit(p, lo, m, 0);
    int right = emit(p, m, hi, 0);
    give_slot(p, right);
    int dst = is_root ? COLL_CANON_RESULT : left < 0 ? left : take_slot(p);
    if (is_root)
        give_slot(p, left);
    p->insn[p->used++] = (coll_canon_insn_t){dst, left, right};
    return dst;
}

int coll_canon_program(int n, coll_canon_insn_t *insn, int *nslots)
{
    program_t p = {.insn = insn, .n = n};
    if (n > 1)
        emit(&p, 0, n, 1);
    *nslots = p.slots;
    return p.used;
}

typedef struct {
    coll_dtype_t t;
    coll_redop_t op;
    const void *const *src;
    char *slots;
    size_t bytes; /* of one operand */
    size_t count;
} fold_t;

/* OUT = the value of [lo, hi) (two or more ranks). The right subtree of a node at LEVEL is
 * computed into scratch slot LEVEL, its left subtree straight into OUT: so no two live partial
 * values share memory, and the leftmost leaves are read before OUT is first written. */
static void fold_range(const fold_t *f, int lo, int hi, void *out, int level)
{
    int m = coll_canon_split(lo, hi);
    const void *left = f->src[lo], *right = f->src[m];
    if (m - lo > 1) {
        fold_range(f, lo, m, out, level + 1);
        left = out;
    }
    if (hi - m > 1) {
        void *slot = f->slots + (size_t)level * f->bytes;
        fold_range(f, m, hi, slot, level + 1);
        right = slot;
    }
    coll_reduce(f->t, f->op, out, left, right, f->count);
}

void coll_canon_fold(coll_dtype_t t, coll_redop_t op, void *dst, const void *const *src, int n,
                     size_t count, void *scratch)
{
    size_t es = coll_dtype_size(t);
    if (n <= 1) {
        if (n == 1 && dst != src[0])
            memmove(dst, src[0], count * es);
        return;
    }
    fold_t f = {t, op == COLL_MEAN ? COLL_SUM : op, src, scratch, count * es, count};
    fold_range(&f, 0, n, dst, 0);
}

int coll_canon_pieces(int n, const int *block_of, coll_canon_piece_t *pieces)
{
    /* Walk the tree from the root: a node whose ranks share one block is a piece; otherwise its
     * children are looked at, left first, so pieces come out in rank order. */
    struct {
        int lo, hi;
    } stack[64];
    int top = 0, count = 0;
    if (n < 1)
        return 0;
    stack[0].lo = 0;
    stack[0].hi = n;
    while (top >= 0) {
        int lo = stack[top].lo, hi = stack[top].hi;
        top--;
        int same = 1;
        for (int q = lo + 1; q < hi && same; q++)
            same = block_of[q] == block_of[lo];
        if (same || hi - lo == 1) {
            pieces[count++] = (coll_canon_piece_t){lo, hi - lo};
            continue;
        }
        int m = coll_canon_split(lo, hi);
        stack[++top].lo = m; /* right first on the stack, so the left comes out first */
        stack[top].hi = hi;
        stack[++top].lo = lo;
        stack[top].hi = m;
    }
    return count;
}
