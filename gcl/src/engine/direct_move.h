/*
 * Host-direct collectives, the data movement: what the protocol (direct.c) asks of it.
 */
#ifndef GCL_DIRECT_MOVE_H
#define GCL_DIRECT_MOVE_H

#include "engine/exec.h"

/* The host-box entry of rank RANK of X's group. */
static inline gcl_hostbox_ipu_t *gcl_direct_box(const gcl_exec_t *x, int rank)
{
    const gcl_ipu_t *me = x->peers->ipu;
    return &me->host->hb.ipus[me->job->ipu_hostlocal[x->peers->ipus[rank]]];
}

/* Elements the fold takes at a time (the accumulator and each operand copy hold this many). */
uint64_t gcl_direct_piece(const gcl_exec_t *x);
/* Bytes of folding space a call needs: the tree's scratch slots, the result and a copy of every
 * operand that cannot be read in place. */
size_t gcl_direct_acc_bytes(const gcl_exec_t *x);

/* The data movement of one phase: WORK for every mode, and the gather of a staged all_reduce. */
gcl_status_t gcl_direct_work(gcl_exec_t *x);
void gcl_direct_gather(gcl_exec_t *x);
/* After the first barrier: where each rank's buffers can be reached by plain loads and stores. */
void gcl_direct_map_peers(gcl_exec_t *x);
/* Staged mode: elements of the current round, and rank Q's region WHICH (0: inputs, 1: results). */
uint64_t gcl_direct_round_len(const gcl_exec_t *x);
char *gcl_direct_region(const gcl_exec_t *x, int q, int which);

#endif /* GCL_DIRECT_MOVE_H */
