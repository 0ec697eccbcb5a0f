/*
 * Replica groups, as in GCL's CommGroup.
 *
 * With N replicas in the job:
 *   ALL              one group of all N replicas (the size argument is ignored).
 *   CONSECUTIVE k    N/k groups of k neighbours: {0..k-1}, {k..2k-1}, ...
 *   ORTHOGONAL k     N/k groups of k replicas with stride N/k: {0, N/k, 2N/k, ...}, {1, 1+N/k, ...}
 * A replica's rank in its group is its position in the list above.
 */
#ifndef COLL_GROUP_H
#define COLL_GROUP_H

typedef enum {
    COLL_GROUP_ALL = 0,
    COLL_GROUP_CONSECUTIVE = 1,
    COLL_GROUP_ORTHOGONAL = 2,
} coll_group_kind_t;

typedef struct {
    coll_group_kind_t kind;
    int size; /* replicas per group; 0 (or N) for ALL */
} coll_group_t;

/* Whether GROUP partitions NREPLICAS replicas. On failure *WHY (if not NULL) says why. */
int coll_group_check(coll_group_t group, int nreplicas, const char **why);

/* Replicas per group. */
int coll_group_size(coll_group_t group, int nreplicas);
/* Index of the group that holds REPLICA (0 .. nreplicas/size - 1). */
int coll_group_index(coll_group_t group, int nreplicas, int replica);
/* REPLICA's rank within its group. */
int coll_group_rank(coll_group_t group, int nreplicas, int replica);
/* The global replica index of rank RANK in the group that holds REPLICA. */
int coll_group_member(coll_group_t group, int nreplicas, int replica, int rank);

/* Parses "all", "consecutive:K" or "orthogonal:K". Returns 0 or -1. */
int coll_group_parse(const char *text, coll_group_t *out);
/* Writes "all", "consecutive:4", ... into BUF; returns BUF. */
char *coll_group_format(coll_group_t group, char *buf, unsigned len);

#endif /* COLL_GROUP_H */
