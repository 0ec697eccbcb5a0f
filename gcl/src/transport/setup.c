/* Setting up the transports; see setup.h. */
#include "transport/setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
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

static gcl_status_t start_ofi(const gcl_transport_setup_t *w, const char *forced)
{
    char why[256] = "";
    gcl_net_t *ofi = NULL;
    gcl_status_t rc = gcl_net_ofi_create(w->params, w->job, w->boot, &ofi, why, sizeof why);
    if (!everyone(w->job, w->boot, rc == GCL_OK)) {
        if (ofi)
            ofi->destroy(ofi);
        ofi = NULL;
        if (!strcmp(forced, "ofi"))
            return gcl_err_set(w->err, GCL_ERR_TRANSPORT, "GCL_TRANSPORT=ofi, but %s",
                               why[0] ? why : "libfabric failed on another instance");
        GCL_INFO(GCL_SUB_OFI, "libfabric unavailable (%s): using mpi between hosts",
                 why[0] ? why : "on another instance");
    }
    if (ofi)
        gcl_net_pool_init(ofi);
    w->fabric->ofi = ofi;
    return GCL_OK;
}

/* The tcp backend on every instance, or on none: then auto tries ofi (returns 1), and
 * GCL_TRANSPORT=tcp fails. */
static gcl_status_t start_tcp(const gcl_transport_setup_t *w, const char *forced, int *fallback)
{
    char why[256] = "";
    gcl_net_t *tcp = NULL;
    gcl_status_t rc =
        gcl_net_tcp_create(w->params, w->job, w->boot, w->host->token, &tcp, why, sizeof why);
    if (!everyone(w->job, w->boot, rc == GCL_OK)) {
        if (tcp)
            tcp->destroy(tcp);
        tcp = NULL;
        if (!strcmp(forced, "tcp"))
            return gcl_err_set(w->err, GCL_ERR_TRANSPORT, "GCL_TRANSPORT=tcp, but %s",
                               why[0] ? why : "tcp failed on another instance");
        GCL_INFO(GCL_SUB_TCP, "tcp unavailable (%s): trying ofi between hosts",
                 why[0] ? why : "on another instance");
        *fallback = 1;
    }
    if (tcp)
        gcl_net_pool_init(tcp);
    w->fabric->tcp = tcp;
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
    int want_mpi = several && (!strcmp(forced, "mpi") || (remote && !strcmp(forced, "auto")));
    if (want_tcp)
        GCL_CHECK(start_tcp(w, forced, &want_ofi));
    if (want_ofi)
        GCL_CHECK(start_ofi(w, forced));
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
