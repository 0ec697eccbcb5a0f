/*
 * An elastic instance's membership; see membership.h.
 *
 * A membership (epoch) is the store's: its members in rank order, each an instance of poprun's
 * plan (a slot). Applying one renumbers the instance and its replicas (contiguous blocks in
 * rank order, as poprun lays them out) and tells the popdist_* calls.
 */
#include "instance/membership.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "gcl/elastic_store.h"

struct gcl_elastic {
    gcl_membership_setup_t w;
    gcl_store_t *store;
    int slot, min_replicas, joined;
    int initial_instances, initial_replicas;
    gcl_membership_t m; /* the current membership */
    /* Instances lost and joined since gcl_membership_next was last asked from a built
     * membership (one resize may go through several memberships). */
    int lost[GCL_ELASTIC_LIST_MAX], nlost, joined_slots[GCL_ELASTIC_LIST_MAX], njoined;
    int fresh;            /* the next gcl_membership_next starts a new change */
    pthread_mutex_t lock; /* ALARMS, and the host box the news rings */
    int alarms;           /* the host box is this membership's: news may ring its IPUs */
};

#define fail(e, rc, ...) gcl_err_set((e)->w.err, (rc), __VA_ARGS__)

int gcl_elastic_wanted(const gcl_popdist_t *pd)
{
    const char *v = getenv(GCL_ELASTIC_ENV_STORE);
    return pd->is_set && v && v[0];
}

/* The store's news (from its thread): every IPU of this host checks at once. */
static void on_news(void *arg)
{
    gcl_elastic_t *e = arg;
    pthread_mutex_lock(&e->lock);
    if (e->alarms)
        for (int i = 0; i < e->w.hb->num_ipus; i++)
            gcl_hostbox_alarm(e->w.hb, i);
    pthread_mutex_unlock(&e->lock);
}

void gcl_membership_alarms(gcl_elastic_t *e, int on)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    e->alarms = on;
    e->fresh |= on; /* built: the change is complete */
    pthread_mutex_unlock(&e->lock);
}

static int hex_token(const char *hex, uint8_t out[16])
{
    if (!hex || strlen(hex) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* The membership M becomes the instance's layout: instances and replicas renumbered. */
static void apply(gcl_elastic_t *e, gcl_membership_t *m)
{
    gcl_popdist_t *pd = e->w.pd;
    gcl_job_t *j = e->w.job;
    gcl_membership_free(&e->m);
    e->m = *m;
    memset(m, 0, sizeof *m);
    int local = pd->num_local_replicas;
    pd->num_instances = j->num_instances = e->m.members;
    pd->instance_index = j->instance_index = e->m.rank;
    pd->num_total_replicas = j->num_replicas = e->m.members * local;
    pd->replica_offset = e->m.rank * local;
    j->num_ipus = j->num_replicas * j->ipus_per_replica;
    j->first_ipu = pd->replica_offset * j->ipus_per_replica;
    gcl_popdist_override(pd);
    /* Log lines keep the instance's slot: poprun tags its output so ("[instance 2]"). */
    for (int i = 0; i < e->m.nlost && e->nlost < GCL_ELASTIC_LIST_MAX; i++)
        e->lost[e->nlost++] = e->m.lost[i];
    for (int i = 0; i < e->m.njoined && e->njoined < GCL_ELASTIC_LIST_MAX; i++)
        e->joined_slots[e->njoined++] = e->m.joined[i];
}

/* Waits for the next membership, applies it and makes its bootstrap. */
static gcl_status_t await_membership(gcl_elastic_t *e, int *final)
{
    gcl_membership_t m;
    char err[GCL_STORE_TEXT_MAX + 64] = "";
    double timeout = e->w.params->timeout_s;
    gcl_status_t rc = gcl_store_wait_epoch(e->store, timeout, &m, err, sizeof err);
    *final = rc != GCL_OK;
    if (rc == GCL_ERR_PEER_FAILED)
        return fail(e, rc, "the elastic job cannot go on: %s", err);
    if (rc != GCL_OK)
        return fail(e, rc, "%s", err);
    if (m.replicas_per_instance != e->w.pd->num_local_replicas) {
        *final = 1;
        gcl_membership_free(&m);
        return fail(e, GCL_ERR_INVALID_ARGUMENT,
                    "poprun's elastic store has %d replicas per instance, this instance %d",
                    m.replicas_per_instance, e->w.pd->num_local_replicas);
    }
    apply(e, &m);
    rc = gcl_boot_store_create(e->store, e->m.rank, e->m.members, timeout, e->w.boot);
    return rc == GCL_OK ? rc : fail(e, rc, "out of host memory for the bootstrap");
}

gcl_status_t gcl_membership_open(const gcl_membership_setup_t *w, gcl_elastic_t **out)
{
    const char *addr = getenv(GCL_ELASTIC_ENV_STORE), *join = getenv(GCL_ELASTIC_ENV_JOIN);
    const char *min = getenv(GCL_ELASTIC_ENV_MIN_REPLICAS);
    gcl_elastic_t *e = gcl_calloc(1, sizeof *e);
    *out = e;
    if (!e)
        return gcl_err_set(w->err, GCL_ERR_NO_HOST_MEMORY, "out of host memory for the store");
    pthread_mutex_init(&e->lock, NULL);
    e->w = *w;
    e->slot = w->pd->instance_index;
    e->joined = join && !strcmp(join, "1");
    e->min_replicas = min ? atoi(min) : 0;
    e->initial_instances = w->pd->num_instances;
    e->initial_replicas = w->pd->num_total_replicas;
    e->m.epoch = -1;
    if (!strcmp(w->params->transport, "mpi"))
        return fail(e, GCL_ERR_INVALID_ARGUMENT,
                    "GCL_TRANSPORT=mpi cannot carry an elastic job (poprun --elastic): MPI does "
                    "not survive a lost instance; use auto, shm, tcp or ofi");
    uint8_t token[16];
    if (hex_token(getenv(GCL_ELASTIC_ENV_TOKEN), token) != 0)
        return fail(e, GCL_ERR_INVALID_ARGUMENT,
                    "%s is not 32 hex digits (poprun --elastic sets it with %s)",
                    GCL_ELASTIC_ENV_TOKEN, GCL_ELASTIC_ENV_STORE);
    char err[GCL_STORE_TEXT_MAX + 64] = "";
    gcl_status_t rc = gcl_store_connect(addr, token, e->slot, e->joined, w->params->heartbeat_s,
                                        on_news, e, &e->store, err, sizeof err);
    if (rc != GCL_OK)
        return fail(e, rc, "%s", err);
    if (e->joined)
        GCL_INFO(GCL_SUB_INIT, "instance %d: waiting to join the elastic job", e->slot);
    int final;
    return await_membership(e, &final);
}

gcl_status_t gcl_membership_next(gcl_elastic_t *e, int failed, int *final)
{
    char err[GCL_STORE_TEXT_MAX];
    if (e->fresh)
        e->nlost = e->njoined = e->fresh = 0;
    gcl_status_t rc = gcl_store_resize(e->store, failed, err, sizeof err);
    *final = rc != GCL_OK;
    if (rc == GCL_ERR_PEER_FAILED)
        return fail(e, rc, "the elastic job cannot go on: %s", err);
    if (rc != GCL_OK)
        return fail(e, rc, "%s", err);
    return await_membership(e, final);
}

void gcl_membership_close(gcl_elastic_t *e, int clean)
{
    if (!e)
        return;
    gcl_membership_alarms(e, 0);
    if (clean && e->store)
        gcl_store_bye(e->store);
    gcl_store_close(e->store);
    gcl_membership_free(&e->m);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

int gcl_membership_epoch(const gcl_elastic_t *e)
{
    return e->m.epoch;
}

const gcl_store_news_t *gcl_membership_news(const gcl_elastic_t *e)
{
    return e && e->store ? gcl_store_news(e->store) : NULL;
}

static void copy_list(int *dst, const int *src, int n, int *count)
{
    *count = n;
    for (int i = 0; i < n && i < GCL_ELASTIC_LIST_MAX; i++)
        dst[i] = src[i];
}

void gcl_membership_info(const gcl_elastic_t *e, gcl_elastic_info_t *out)
{
    memset(out, 0, sizeof *out);
    out->epoch = e->m.epoch;
    out->num_instances = e->w.job->num_instances;
    out->instance_index = e->w.job->instance_index;
    out->num_replicas = e->w.job->num_replicas;
    out->replica_offset = e->w.pd->replica_offset;
    out->num_local_replicas = e->w.pd->num_local_replicas;
    out->initial_instances = e->initial_instances;
    out->initial_replicas = e->initial_replicas;
    out->min_replicas = e->min_replicas;
    out->slot = e->slot;
    for (int i = 0; i < e->njoined; i++)
        out->joined |= e->joined_slots[i] == e->slot;
    copy_list(out->lost, e->lost, e->nlost, &out->num_lost);
    copy_list(out->joined_slots, e->joined_slots, e->njoined, &out->num_joined);
}
