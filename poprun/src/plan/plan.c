/*
 * The replica -> instance -> host -> ILD -> IPU plan; the rules are in plan.h.
 *
 * Example: 16 replicas, 4 instances, hosts h1,h2, POD16 (one ILD of 16 IPUs):
 *   instance 0: h1 (local 0), replicas 0-3,   IPUs 0-3
 *   instance 1: h1 (local 1), replicas 4-7,   IPUs 4-7
 *   instance 2: h2 (local 0), replicas 8-11,  IPUs 8-11
 *   instance 3: h2 (local 1), replicas 12-15, IPUs 12-15
 * and 64 replicas, 4 instances on POD128 (two ILDs of 64) with the default number of ILDs (1,
 * since 64 IPUs fit in one) put all four in ILD 0; with --num-ilds 2, instances 0-1 take IPUs
 * 0-31 of ILD 0 and instances 2-3 take IPUs 64-95 of ILD 1.
 */
#include "plan/plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static int check_divisible(const struct plan_request *req, int num_hosts, char *err, size_t errlen)
{
    int r = req->num_replicas, i = req->num_instances;
    if (r % i != 0)
        return errf(err, errlen, "%d %s cannot be divided evenly among %d %s", r,
                    plural(r, "replica", "replicas"), i, plural(i, "instance", "instances"));
    if (i % num_hosts != 0)
        return errf(err, errlen, "%d %s cannot be divided evenly among %d hosts", i,
                    plural(i, "instance", "instances"), num_hosts);
    return 0;
}

/* The ILD rules that need no topology: every ILD gets an equal, non-empty share of instances. */
static int check_ilds(int num_instances, int num_ilds, char *err, size_t errlen)
{
    if (num_ilds > num_instances)
        return errf(err, errlen,
                    "IPU-Link domain %d would hold no instance (%d %s over %d IPU-Link domains; "
                    "each needs at least one)",
                    num_instances, num_instances, plural(num_instances, "instance", "instances"),
                    num_ilds);
    if (num_instances % num_ilds != 0)
        return errf(err, errlen, "%d instances cannot be divided evenly among %d IPU-Link domains",
                    num_instances, num_ilds);
    return 0;
}

int plan_layout(const struct plan_request *req, int num_ilds, struct plan *out, char *err,
                size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if ((long)req->num_replicas * req->ipus_per_replica > INT_MAX)
        return errf(err, errlen, "%d replicas x %d IPUs per replica is too many IPUs",
                    req->num_replicas, req->ipus_per_replica);
    bool local = !req->hosts || req->hosts->n == 0;
    int num_hosts = local ? 1 : req->hosts->n;
    if (check_divisible(req, num_hosts, err, errlen) != 0 ||
        check_ilds(req->num_instances, num_ilds, err, errlen) != 0)
        return -1;

    out->num_replicas = req->num_replicas;
    out->num_instances = req->num_instances;
    out->ipus_per_replica = req->ipus_per_replica;
    out->replicas_per_instance = req->num_replicas / req->num_instances;
    out->total_ipus = req->num_replicas * req->ipus_per_replica;
    out->local = local;
    if (local)
        strvec_push(&out->hosts, "localhost");
    else
        strvec_extend(&out->hosts, req->hosts);
    out->instances_per_host = req->num_instances / num_hosts;
    out->num_ilds = num_ilds;
    out->inst = xcalloc((size_t)req->num_instances, sizeof(*out->inst));
    int per_ild = req->num_instances / num_ilds;
    for (int i = 0; i < req->num_instances; i++) {
        struct plan_instance *pi = &out->inst[i];
        pi->host = i / out->instances_per_host;
        pi->local_index = i % out->instances_per_host;
        pi->ild = i / per_ild;
        pi->replica_offset = i * out->replicas_per_instance;
        pi->num_replicas = out->replicas_per_instance;
        pi->first_ipu = -1;
        pi->num_ipus = out->replicas_per_instance * req->ipus_per_replica;
    }
    return 0;
}

/* Checks that NUM_ILDS ILDs of TOPO can each take total/num_ilds IPUs. */
static int check_ild_fit(const struct plan_topology *topo, int total, int num_ilds, char *err,
                         size_t errlen)
{
    if (num_ilds > topo->num_ilds)
        return errf(err, errlen, "--num-ilds %d exceeds the %d IPU-Link %s of topology %s",
                    num_ilds, topo->num_ilds, plural(topo->num_ilds, "domain", "domains"),
                    topo->name);
    int per_ild = total / num_ilds;
    for (int k = 0; k < num_ilds; k++) {
        if (per_ild > topo->ild_size[k])
            return errf(err, errlen,
                        "%d IPUs per IPU-Link domain exceed the %d IPUs of IPU-Link domain %d "
                        "of topology %s",
                        per_ild, topo->ild_size[k], k, topo->name);
    }
    return 0;
}

/* Whether NUM_ILDS ILDs work for the request (used to pick the default). */
static bool ilds_work(const struct plan_request *req, const struct plan_topology *topo,
                      int num_ilds)
{
    int total = req->num_replicas * req->ipus_per_replica;
    return num_ilds <= req->num_instances && req->num_instances % num_ilds == 0 &&
           check_ild_fit(topo, total, num_ilds, NULL, 0) == 0;
}

/* The default number of ILDs: the fewest, starting from those that the IPUs fill, that work.
 * When none does, the fewest that the IPUs fill, so that the error names the real problem. */
static int default_ilds(const struct plan_request *req, const struct plan_topology *topo)
{
    int total = req->num_replicas * req->ipus_per_replica, fewest = 1, held = 0;
    for (int k = 0; k < topo->num_ilds; k++) {
        held += topo->ild_size[k];
        if (held >= total) {
            fewest = k + 1;
            break;
        }
    }
    for (int k = fewest; k <= topo->num_ilds; k++) {
        if (ilds_work(req, topo, k))
            return k;
    }
    return fewest;
}

int plan_build(const struct plan_request *req, const struct plan_topology *topo, struct plan *out,
               char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    long total = (long)req->num_replicas * req->ipus_per_replica;
    int num_hosts = req->hosts && req->hosts->n > 0 ? req->hosts->n : 1;
    if (check_divisible(req, num_hosts, err, errlen) != 0)
        return -1;
    if (total > topo->num_ipus)
        return errf(err, errlen,
                    "%ld IPUs (%d %s x %d IPU%s per replica) exceed the %d IPUs of "
                    "topology %s",
                    total, req->num_replicas, plural(req->num_replicas, "replica", "replicas"),
                    req->ipus_per_replica, plural(req->ipus_per_replica, "", "s"), topo->num_ipus,
                    topo->name);
    int num_ilds = req->num_ilds > 0 ? req->num_ilds : default_ilds(req, topo);
    if (num_ilds > topo->num_ilds)
        return check_ild_fit(topo, (int)total, num_ilds, err, errlen);
    if (check_ilds(req->num_instances, num_ilds, err, errlen) != 0 ||
        check_ild_fit(topo, (int)total, num_ilds, err, errlen) != 0 ||
        plan_layout(req, num_ilds, out, err, errlen) != 0)
        return -1;
    int per_ild = req->num_instances / num_ilds;
    for (int i = 0; i < out->num_instances; i++) {
        struct plan_instance *pi = &out->inst[i];
        pi->first_ipu = topo->ild_first[pi->ild] + (i - pi->ild * per_ild) * pi->num_ipus;
    }
    return 0;
}

void plan_free(struct plan *p)
{
    strvec_free(&p->hosts);
    free(p->inst);
    memset(p, 0, sizeof(*p));
}

void plan_topology_free(struct plan_topology *t)
{
    free(t->ild_first);
    free(t->ild_size);
    t->ild_first = NULL;
    t->ild_size = NULL;
}
