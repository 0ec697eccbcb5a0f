/*
 * Helpers shared by the schedule builders of several algorithms. Private to collectives/: the
 * algorithms include it, nothing outside this directory does.
 */
#ifndef COLL_BUILDERS_H
#define COLL_BUILDERS_H

#include "coll/algo.h"
#include "coll/canon.h"

/* X modulo N in 0 .. n-1, also for negative X. */
static inline int coll_mod(int x, int n)
{
    return ((x % n) + n) % n;
}

/* The largest power of two that is at most N (N >= 1), and its base-2 logarithm. */
int coll_pof2_floor(int n);
int coll_log2_floor(int n);
/* The smallest K with 2^K >= N (0 for N <= 1). */
int coll_log2_ceil(int n);

/*
 * Recursive doubling and halving need a power-of-two number of ranks. With n = p + extra ranks
 * (p the largest power of two <= n), the first 2*extra ranks pair up before the main phase: each
 * even one hands its data to the odd one above it and sits the main phase out, and the p ranks
 * left take "new ranks" 0 .. p-1 in rank order (odd rank r < 2*extra is new rank r/2, rank
 * r >= 2*extra is new rank r - extra). At the end the odd ranks hand the result back.
 */
typedef struct {
    int p, extra;
    int newrank; /* this rank's new rank, or -1 when it sits the main phase out */
} coll_pof2_t;

void coll_pof2_init(coll_pof2_t *f, int n, int rank);
/* The group rank of new rank NR. */
int coll_pof2_rank(const coll_pof2_t *f, int nr);
/* The pairing step before the main phase (a step of its own; nothing for ranks >= 2*extra): an
 * even rank sends LEN elements of IN to the odd one above it, which folds them with its own IN
 * into ACC (lower rank first). */
void coll_pof2_fold_in(coll_schedule_t *s, const coll_pof2_t *f, int rank, coll_buf_t acc,
                       uint64_t len);
/* The step after it: the odd rank sends LEN elements of FROM at FROM_OFF back to the even one,
 * which receives them at the start of OUT. */
void coll_pof2_fold_out(coll_schedule_t *s, const coll_pof2_t *f, int rank, coll_buf_t from,
                        uint64_t from_off, uint64_t len);

/* One step in which every rank sends block q (of COUNT elements) of IN to rank q and receives
 * rank q's block for it into TMP, slot q (q < RANK) or q - 1 (q > RANK); sets tmp_count to the
 * n - 1 blocks. Direct all_to_all and reduce_scatter start with it. */
void coll_exchange_blocks(coll_schedule_t *s, int n, int rank, uint64_t count);

/* Elements [*off, *off + *len) of blocks LO .. LO+W-1 when COUNT elements form NBLOCKS blocks
 * (coll_block): consecutive blocks are contiguous, so any run of them is one range. */
void coll_block_range(uint64_t count, int nblocks, int lo, int w, uint64_t *off, uint64_t *len);

/* How many segments a pipelined algorithm cuts LEN elements into: about A->chunk_bytes each (or
 * COLL_CHUNK_BYTES), at least 1 and at most COLL_MAX_SEGMENTS. */
int coll_nsegments(const coll_args_t *a, uint64_t len);

/*
 * Appends local ops that fold N contributions of LEN elements, in rank order 0 .. n-1, into
 * OUT[out_off, +len): ((c0 OP c1) OP c2) ... Rank RANK's own contribution is OWN[own_off, +len)
 * (which may be the very range OUT names, as in an in-place call); every other rank q's sits in
 * TMP at tmp_off + slot(q) * tmp_stride, where slot(q) = q for q < rank and q - 1 above. The
 * slot of rank 0 is used as the accumulator while folding the ranks below RANK, so every rank
 * runs the same sequence of operations on the same operands and gets the same bits.
 */
void coll_fold_ranks(coll_schedule_t *s, int n, int rank, uint64_t out_off, coll_buf_t own,
                     uint64_t own_off, uint64_t tmp_off, uint64_t tmp_stride, uint64_t len);

/*
 * Appends local ops that fold N contributions of LEN elements along the canonical tree
 * (coll/canon.h) into OUT[out_off, +len). Contribution k sits in TMP at tmp_off + k * stride
 * (every rank's, its own included: the caller copies its own there first); the tree's partial
 * values use TMP from tmp_off + n * stride on, coll_canon_depth(n) slots of STRIDE. Every rank
 * that runs it on the same contributions gets the same bits as coll_canon_fold. MEAN is
 * divided here too.
 */
void coll_canon_fold_ops(coll_schedule_t *s, int n, coll_redop_t op, uint64_t out_off,
                         uint64_t tmp_off, uint64_t stride, uint64_t len);
/* TMP elements coll_canon_fold_ops uses for N contributions of STRIDE: (n + depth) * stride. */
uint64_t coll_canon_tmp(int n, uint64_t stride);

/* The canonical all_reduce across hosts (allreduce/canonical_hosts.c), for the layouts of
 * coll_canon_host_blocks. */
/* Its chunks: about COLL_CANON_CHUNKS of them, each of 1 to 16 MiB. Every step of the pipeline
 * waits for all of its transfers, so a step costs a synchronisation of the ranks on top of its
 * bytes: over 2 namespace hosts x 2 instances (2 cores), a 256 MiB all_reduce in 1 MiB chunks
 * (259 steps) reached 0.47 GB/s busbw, in 4 MiB 0.80 and in 16 MiB 0.87, while 16 MiB vectors
 * gained nothing from chunks above 1 MiB (gcl-bench --compare mpi, X_CHUNK experiment). */
#define COLL_CANON_CHUNK_MIN ((size_t)1 << 20)
#define COLL_CANON_CHUNK_MAX ((size_t)16 << 20)
#define COLL_CANON_CHUNKS    16
int coll_canon_hosts_build(const coll_args_t *a, coll_schedule_t *s, int hosts, int per_host);

/* Operand order for a reduction between this rank and PEER's data: the lower rank's data is
 * the left operand, so both sides of a pairwise exchange compute the same bits. Returns the
 * flags for a RECV_REDUCE whose local operand is this rank's. */
static inline unsigned coll_order_flags(int rank, int peer)
{
    return peer < rank ? COLL_OPF_SWAP : 0u;
}

#endif /* COLL_BUILDERS_H */
