/*
 * The canonical reduction order: one fixed binary tree over the ranks of a group.
 *
 * Floating-point reduction is not associative, so the bits of a reduced element depend on the
 * order in which its n contributions are folded. With the automatic choice, libgcl folds every
 * element of every all_reduce and reduce_scatter along the same tree, whatever carries the bytes
 * (threads of one process, processes of one host, hosts) and whether the call is blocking or not.
 * The tree depends only on n, so the same job gives the same bits on one host or many.
 *
 * The tree over the ranks [lo, hi): a single rank is a leaf; otherwise it splits at
 *
 *     m = lo + 2^k,  2^k the largest power of two strictly less than hi - lo,
 *
 * into the left subtree [lo, m) and the right subtree [m, hi), and the node's value is
 * value(left) OP value(right), the left (lower ranks) always the left operand. Examples:
 *     n = 4:  (x0 + x1) + (x2 + x3)
 *     n = 6:  ((x0 + x1) + (x2 + x3)) + (x4 + x5)
 *     n = 7:  ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + x6)
 * For a power of two it is the balanced tree, which recursive halving and doubling with the
 * nearest partner first also compute. Its subtrees are runs of consecutive ranks whose length is
 * a power of two and whose start is a multiple of it, so a run of L ranks (L a power of two)
 * that starts at a multiple of L (one process, one host, when ranks go to them in equal
 * contiguous blocks) is a subtree: it can be reduced locally first, and only its value crosses.
 *
 * MEAN folds as SUM and is divided by n once, at the end, by whoever holds the final sum.
 * SQUARE_ADD folds the contributions as they are (callers square each first). Integer sums wrap.
 * Because the operand order is fixed too, MIN and MAX of signed zeros, and which NaN a fold
 * keeps, are also the same bits everywhere (coll/reduce.h says which operand wins a tie).
 */
#ifndef COLL_CANON_H
#define COLL_CANON_H

#include <stddef.h>
#include <stdint.h>

#include "coll/types.h"

/* Where the tree splits [lo, hi) (hi - lo >= 2). */
int coll_canon_split(int lo, int hi);

/* The height of the tree over N ranks: 0 for one rank, ceil(log2 n) otherwise. */
int coll_canon_depth(int n);

/*
 * A fold program: the tree over N leaves as a list of n - 1 binary operations, in the order a
 * single pass evaluates them (post order). Operand codes: k >= 0 is leaf k (rank k's
 * contribution); -1 - s is scratch slot s. The last operation's destination is the result
 * (dst == COLL_CANON_RESULT); every other destination is a scratch slot, at most
 * coll_canon_depth(n) - 1 of them.
 */
#define COLL_CANON_RESULT (-1000000)
typedef struct {
    int dst, left, right;
} coll_canon_insn_t;

/* Writes the program for N leaves into INSN (room for n - 1) and the number of scratch slots it
 * needs into *NSLOTS. Returns the number of operations (0 for n == 1). */
int coll_canon_program(int n, coll_canon_insn_t *insn, int *nslots);

/*
 * DST = the fold of SRC[0..n-1] (COUNT elements each) along the tree, with SUM for MEAN (divide
 * afterwards with coll_divide). SCRATCH holds coll_canon_depth(n) * COUNT elements (unused for
 * n <= 2). DST may be SRC[0] or SRC[1] (they are read before DST is first written), and must not
 * overlap any other SRC. Callers that want the operands to stay in cache call it on pieces.
 */
void coll_canon_fold(coll_dtype_t t, coll_redop_t op, void *dst, const void *const *src, int n,
                     size_t count, void *scratch);

/*
 * The maximal subtrees whose ranks all lie in one block (a process, a host): BLOCK_OF[q] names
 * rank q's block. Fills PIECES[i] = {first, count} in rank order (room for n) and returns how
 * many there are. Every rank is in exactly one piece; a block that holds an aligned run of a
 * power-of-two length is one piece.
 */
typedef struct {
    int first, count;
} coll_canon_piece_t;
int coll_canon_pieces(int n, const int *block_of, coll_canon_piece_t *pieces);

/*
 * Whether the hosts of a call (coll_args_t.host_of) each hold one aligned block of equal size,
 * each a subtree of the tree: 1 with the number of hosts and ranks per host, else 0. Then the
 * canonical all_reduce reduces inside each host first and sends only partial sums across
 * (allreduce/canonical_hosts.c).
 */
struct coll_args;
int coll_canon_host_blocks(const struct coll_args *a, int *hosts, int *per_host);

#endif /* COLL_CANON_H */
