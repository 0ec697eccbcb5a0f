/* Setting up the transports; see setup.h. */
#include "transport/setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"

/* All or none: an instance that cannot talk tcp or ofi means nobody does. */
static int everyone(const gcl_job_t *j, gcl_boot_t *boot, int ok)
{
    int *votes = gcl_calloc((size_t)j->num_instances, sizeof(int)), all = 0;
    if (votes && boot->allgather(boot, &ok, votes, sizeof ok) == GCL_OK) {
        all = 1;
        for (int i = 0; i < j->num_instances; i++)
            all &= votes[i];
    }
    free(votes);
    return all;
}

/* One network backend: how to make it, and what auto does without it. */
typedef struct {
    const char *name; /* as GCL_TRANSPORT names it */
    unsigned sub;     /* its log subsystem */
    const char *what; /* what failed, as a sentence's subject */
    const char *next; /* what auto uses instead */
    gcl_status_t (*create)(const gcl_transport_setup_t *w, gcl_net_t **out, char *err, size_t len);
} net_kind_t;

static gcl_status_t create_tcp(const gcl_transport_setup_t *w, gcl_net_t **out, char *err,
                               size_t len)
{
    return gcl_net_tcp_create(w->params, w->job, w->boot, w->host->token, out, err, len);
}

static gcl_status_t create_ofi(const gcl_transport_setup_t *w, gcl_net_t **out, char *err,
                               size_t len)
{
    return gcl_net_ofi_create(w->params, w->job, w->boot, out, err, len);
}

static const net_kind_t tcp_kind = {"tcp", GCL_SUB_TCP, "tcp", "trying ofi", create_tcp};
static const net_kind_t ofi_kind = {"ofi", GCL_SUB_OFI, "libfabric", "using mpi", create_ofi};

/* Backend K on every instance, or on none: then GCL_TRANSPORT=K fails, and auto goes on to the
 * next (*OUT stays NULL). */
static gcl_status_t start_net(const gcl_transport_setup_t *w, const char *forced,
                              const net_kind_t *k, gcl_net_t **out)
{
    char why[256] = "";
    gcl_net_t *net = NULL;
    gcl_status_t rc = k->create(w, &net, why, sizeof why);
    if (!everyone(w->job, w->boot, rc == GCL_OK)) {
        if (net)
            net->destroy(net);
        net = NULL;
        if (!strcmp(forced, k->name))
            return gcl_err_set(w->err, GCL_ERR_TRANSPORT, "GCL_TRANSPORT=%s, but %s", k->name,
                               why[0] ? why : "it failed on another instance");
        GCL_INFO(k->sub, "%s unavailable (%s): %s between hosts", k->what,
                 why[0] ? why : "on another instance", k->next);
    }
    if (net)
        gcl_net_pool_init(net);
    *out = net;
    return GCL_OK;
}

gcl_status_t gcl_transports_init(const gcl_transport_setup_t *w)
{
    const char *forced = w->params->transport;
    int remote = w->job->num_hosts > 1, several = w->job->num_instances > 1;
    gcl_fabric_t *f = w->fabric;
    *f = (gcl_fabric_t){w->job, &w->host->hb, w->host->token, NULL, NULL, NULL, NULL};
    if (remote && !strcmp(forced, "shm"))
        return gcl_err_set(w->err, GCL_ERR_INVALID_ARGUMENT,
                           "GCL_TRANSPORT=shm, but the job spans %d hosts", w->job->num_hosts);
    int want_tcp = several && (!strcmp(forced, "tcp") || (remote && !strcmp(forced, "auto")));
    int want_ofi = several && !strcmp(forced, "ofi");
    /* Beside tcp, auto makes the mpi backend too, where MPI is the bootstrap (not in an elastic
     * job, whose bootstrap is poprun's store: MPI does not survive a lost instance). */
    int mpi_boot = gcl_boot_mpi_comm(w->boot, NULL) != NULL;
    int want_mpi =
        several && (!strcmp(forced, "mpi") || (remote && mpi_boot && !strcmp(forced, "auto")));
    if (want_tcp) {
        GCL_CHECK(start_net(w, forced, &tcp_kind, &f->tcp));
        want_ofi |= !f->tcp;
    }
    if (want_ofi)
        GCL_CHECK(start_net(w, forced, &ofi_kind, &f->ofi));
    if (want_mpi || (want_ofi && !f->ofi)) {
        char err[256] = "";
        gcl_status_t rc = gcl_net_mpi_create(w->params, w->job, w->boot, &f->mpi, err, sizeof err);
        if (rc != GCL_OK)
            return gcl_err_set(w->err, rc, "%s", err[0] ? err : gcl_status_string(rc));
        gcl_net_pool_init(f->mpi);
    }
    if (!strcmp(forced, "tcp") && f->tcp)
        f->forced = &gcl_transport_tcp;
    else if (!strcmp(forced, "ofi") && f->ofi)
        f->forced = &gcl_transport_ofi;
    else if (!strcmp(forced, "mpi") || (!strcmp(forced, "ofi") && f->mpi))
        f->forced = &gcl_transport_mpi;
    return GCL_OK;
}

void gcl_transports_fini(gcl_fabric_t *f)
{
    gcl_net_t *nets[] = {f->tcp, f->ofi, f->mpi};
    for (int i = 0; i < 3; i++)
        if (nets[i]) {
            gcl_net_pool_fini(nets[i]);
            nets[i]->destroy(nets[i]);
        }
    f->tcp = f->ofi = f->mpi = NULL;
}
