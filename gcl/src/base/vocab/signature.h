/*
 * The call signature: what a collective call or point-to-point message is, carried by each of
 * its messages and published in the host box, so that peers can check they are in the same
 * call (and name both sides when they are not).
 */
#ifndef GCL_SIG_H
#define GCL_SIG_H

#include <stddef.h>
#include <stdint.h>

/* coll of a point-to-point message. */
#define GCL_SIG_P2P 0xffu

typedef struct {
    uint32_t seq;      /* collective sequence number on the communicator (p2p: message number) */
    uint8_t coll;      /* coll_collective_t, or GCL_SIG_P2P */
    uint8_t dtype;     /* coll_dtype_t */
    uint8_t op;        /* coll_redop_t */
    uint8_t gkind;     /* coll_group_kind_t */
    int32_t gsize;     /* group size */
    int32_t root;      /* broadcast root (p2p: the tag), or -1 */
    uint32_t algo;     /* gcl_sig_hash of the data path and algorithm */
    uint32_t listhash; /* 0, or gcl_all_reduce_multi's hash of the tensor list */
    uint64_t count;    /* elements */
} gcl_sig_t;
/* No padding, so memcmp compares every field. */
_Static_assert(sizeof(gcl_sig_t) == 32, "gcl_sig_t is published as four words");

/* "all_reduce #3 of 1024 x f32, op sum, root -1, group all (algorithm 1a2b3c4d)". */
void gcl_sig_describe(const gcl_sig_t *s, char *buf, size_t len);

/* FNV-1a over N ints, and over a string (at most 64 characters). */
uint32_t gcl_hash_ints(const int *v, int n);
uint32_t gcl_sig_hash(const char *name);

#endif /* GCL_SIG_H */
