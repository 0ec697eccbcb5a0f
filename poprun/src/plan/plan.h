/*
 * The plan: which instance hosts which replicas, on which host, in which IPU-Link domain (ILD),
 * on which IPUs of the simulated pod. Pure arithmetic, no I/O, so it is unit-tested by tables.
 *
 * Rules (R replicas, I instances, H hosts, K ILDs, P IPUs per replica, T = R x P IPUs):
 *   - I divides R: instance i hosts replicas [i*R/I, (i+1)*R/I) (contiguous blocks).
 *   - H divides I: host h runs instances [h*I/H, (h+1)*I/H); the local index is i mod I/H.
 *   - K divides I and K <= I: ILD k holds instances [k*I/K, (k+1)*I/K), so no ILD is empty and
 *     each holds T/K IPUs, which must fit in it. Replica r's IPUs are the consecutive IPUs that
 *     follow those of the replicas before it in its ILD, starting at the ILD's first IPU.
 *   - T must fit in the topology; K defaults to the fewest ILDs that hold T and satisfy the above.
 */
#ifndef POPRUN_PLAN_H
#define POPRUN_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

/* What the plan needs to know of a topology (filled from sim by topo.c, or by a test). */
struct plan_topology {
    char name[256]; /* preset name or file path, for messages and POPDIST_TOPOLOGY */
    int num_ipus;
    int num_ilds;
    int *ild_first; /* first IPU of each ILD (ILDs hold consecutive IPUs) */
    int *ild_size;  /* IPUs in each ILD */
};

struct plan_request {
    int num_replicas;
    int num_instances;
    int ipus_per_replica;
    int num_ilds;               /* 0: the fewest that work */
    const struct strvec *hosts; /* empty or NULL: this host only */
};

struct plan_instance {
    int host;           /* index into plan.hosts */
    int local_index;    /* index among the instances of its host */
    int ild;            /* IPU-Link domain */
    int replica_offset; /* first replica */
    int num_replicas;
    int first_ipu; /* first IPU in the topology, -1 when planned without one */
    int num_ipus;
};

struct plan {
    int num_replicas;
    int num_instances;
    int ipus_per_replica;
    int replicas_per_instance;
    int total_ipus;
    bool local;          /* no hosts given: everything on this host */
    struct strvec hosts; /* "localhost" when local */
    int instances_per_host;
    int num_ilds;
    struct plan_instance *inst; /* num_instances entries */
};

/* Lays out instances over hosts and NUM_ILDS ILDs (which must be > 0) without a topology:
 * checks divisibility and fills every field but first_ipu (-1). This is what each instance
 * wrapper recomputes from the options poprun passes it. Returns 0, or -1 with one line in ERR. */
int plan_layout(const struct plan_request *req, int num_ilds, struct plan *out, char *err,
                size_t errlen);

/* The full plan against TOPO: checks that the IPUs fit, resolves req->num_ilds (0 = the fewest
 * that work), lays out, and assigns IPUs. Returns 0, or -1 with one line in ERR. */
int plan_build(const struct plan_request *req, const struct plan_topology *topo, struct plan *out,
               char *err, size_t errlen);

void plan_free(struct plan *p);

/* Frees the arrays of a plan_topology filled by topo.c or a test. */
void plan_topology_free(struct plan_topology *t);

#endif /* POPRUN_PLAN_H */
