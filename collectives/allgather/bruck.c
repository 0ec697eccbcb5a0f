/*
 * all_gather, bruck: ceil(log2 n) steps for any n. After the step of distance d, rank r holds
 * the 2d blocks r, r+1, .. r+2d-1 (mod n); in that step it sends the first min(d, n-d) blocks it
 * holds (r ..) to r-d and receives blocks r+d .. from r+d. Bruck's algorithm keeps the blocks in
 * a rotated local buffer and rotates at the end; here each block is addressed where it belongs
 * in OUT, so the rotation disappears and a wrapped run of blocks is sent as two ranges.
 *
 * Trace, n = 5 (block q is rank q's input):
 *   d = 1: rank r sends block r to r-1 and receives r+1:          r holds r, r+1
 *   d = 2: rank r sends blocks r, r+1 to r-2, receives r+2, r+3:  r holds r .. r+3
 *   d = 4: rank r sends block r (min(4, 1) = 1) to r-4, receives r+4: r holds all five
 *   (rank 3 in step d = 2 receives blocks 0 and 1 from rank 0: one range, 0 .. 1; rank 4
 *   receives 1 and 2; rank 2 sends 2 and 3 and receives 4 and 0: two ranges.)
 *
 * Cost: ceil(log2 n) steps; each rank sends (n-1) x COUNT elements in all. No TMP.
 */
#include "builders.h"

/* Sends or receives blocks first .. first+cnt-1 (mod n) of OUT, as one or two ranges. */
static void blocks(coll_schedule_t *s, int recv, int peer, int first, int cnt, int n, uint64_t c)
{
    int head = first + cnt <= n ? cnt : n - first;
    for (int part = 0; part < 2; part++) {
        int b = part ? 0 : first, m = part ? cnt - head : head;
        if (recv)
            coll_recv(s, peer, COLL_BUF_OUT, (uint64_t)b * c, (uint64_t)m * c);
        else
            coll_send(s, peer, COLL_BUF_OUT, (uint64_t)b * c, (uint64_t)m * c);
    }
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    coll_step(s);
    coll_copy(s, COLL_BUF_OUT, (uint64_t)r * c, COLL_BUF_IN, 0, c);
    for (int d = 1; d < n; d *= 2) {
        int cnt = d < n - d ? d : n - d;
        if (d > 1)
            coll_step(s);
        if (d == 1) /* OUT's block r is filled at the end of this step: send it from IN */
            coll_send(s, coll_mod(r - d, n), COLL_BUF_IN, 0, c);
        else
            blocks(s, 0, coll_mod(r - d, n), r, cnt, n, c);
        blocks(s, 1, (r + d) % n, (r + d) % n, cnt, n, c);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allgather_bruck = {
    .name = "bruck",
    .description = "Bruck's algorithm: ceil(log2 n) steps of doubling runs of blocks",
    .coll = COLL_ALLGATHER,
    .build = build,
};
