/* Setting up the transports; see transport_init.h. */
#include "transport/setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/log.h"

/* All or none: an instance that cannot talk ofi means nobody does. */
static int everyone(struct gcl_instance *inst, int ok)
{
    int *votes = gcl_calloc((size_t)inst->job.num_instances, sizeof(int)), all = 0;
    if (votes && inst->boot->allgather(inst->boot, &ok, votes, sizeof ok) == GCL_OK) {
        all = 1;
        for (int i = 0; i < inst->job.num_instances; i++)
            all &= votes[i];
    }
    free(votes);
    return all;
}

static gcl_status_t start_ofi(struct gcl_instance *inst, const char *forced)
{
    char why[256] = "";
    gcl_net_t *ofi = NULL;
    gcl_status_t rc =
        gcl_net_ofi_create(&inst->params, &inst->job, inst->boot, &ofi, why, sizeof why);
    if (!everyone(inst, rc == GCL_OK)) {
        if (ofi)
            ofi->destroy(ofi);
        ofi = NULL;
        if (!strcmp(forced, "ofi"))
            return gcl_err_set(&inst->err, GCL_ERR_TRANSPORT, "GCL_TRANSPORT=ofi, but %s",
                               why[0] ? why : "libfabric failed on another instance");
        GCL_INFO(GCL_SUB_OFI, "libfabric unavailable (%s): using mpi between hosts",
                 why[0] ? why : "on another instance");
    }
    inst->fabric.ofi = ofi;
    return GCL_OK;
}

gcl_status_t gcl_transports_init(struct gcl_instance *inst)
{
    const char *forced = inst->params.transport;
    int remote = inst->job.num_hosts > 1, several = inst->job.num_instances > 1;
    gcl_fabric_t *f = &inst->fabric;
    *f = (gcl_fabric_t){&inst->job, &inst->host.hb, inst->host.token, NULL, NULL, NULL};
    if (remote && !strcmp(forced, "shm"))
        return gcl_err_set(&inst->err, GCL_ERR_INVALID_ARGUMENT,
                           "GCL_TRANSPORT=shm, but the job spans %d hosts", inst->job.num_hosts);
    int want_ofi = several && (!strcmp(forced, "ofi") || (remote && !strcmp(forced, "auto")));
    int want_mpi = several && (!strcmp(forced, "mpi") || (remote && !strcmp(forced, "auto")));
    if (want_ofi)
        GCL_CHECK(start_ofi(inst, forced));
    if (want_mpi || (want_ofi && !f->ofi)) {
        char err[256] = "";
        gcl_status_t rc =
            gcl_net_mpi_create(&inst->params, &inst->job, inst->boot, &f->mpi, err, sizeof err);
        if (rc != GCL_OK)
            return gcl_err_set(&inst->err, rc, "%s", err[0] ? err : gcl_status_string(rc));
    }
    if (!strcmp(forced, "ofi") && f->ofi)
        f->forced = &gcl_transport_ofi;
    else if (!strcmp(forced, "mpi") || (!strcmp(forced, "ofi") && f->mpi))
        f->forced = &gcl_transport_mpi;
    return GCL_OK;
}

void gcl_transports_fini(struct gcl_instance *inst)
{
    if (inst->fabric.ofi)
        inst->fabric.ofi->destroy(inst->fabric.ofi);
    if (inst->fabric.mpi)
        inst->fabric.mpi->destroy(inst->fabric.mpi);
    inst->fabric.ofi = inst->fabric.mpi = NULL;
}
