/*
 * An elastic instance's resize. Declared in instance/resize.h and gcl/elastic.h.
 *
 * A resize (gcl_elastic_resize) is, on every instance of the old membership that is left and on
 * every replacement: tear down what depends on the membership (gcl_instance_unbuild: the control
 * plane, the transports, the host box, the layout, the bootstrap); ask the store for the next
 * membership and wait for it; renumber the instance and its replicas; and build again over the
 * new membership's bootstrap (gcl_instance_build), as gcl_init does. What the instance keeps:
 * its parameters, its simulated IPUs (clocks, memory, statistics) and the program's memory. A
 * fault during the resize is another loss: one lost before the membership forms is left out
 * of it; one lost while the new membership builds fails its bootstrap calls (the store fails
 * them for everyone), and every survivor resizes again, up to RESIZE_ATTEMPTS times.
 */
#include "instance/resize.h"

#include <signal.h>

#include "base/fault.h"
#include "base/log.h"
#include "gcl/elastic.h"
#include "instance/instance.h"
#include "instance/membership.h"

/* How many memberships a resize tries to build before it gives up (each failed one lost an
 * instance, so this bounds the faults during one resize). */
#define RESIZE_ATTEMPTS 8

static gcl_status_t resize_once(struct gcl_instance *inst, int failed, int *final)
{
    gcl_membership_alarms(inst->elastic, 0);
    gcl_instance_unbuild(inst);
    GCL_CHECK(gcl_membership_next(inst->elastic, failed, final));
    if (gcl_fault_hit(GCL_FAULT_RESIZE)) /* GCL_FAULT_INJECT=resize:N: a fault in the resize */
        raise(SIGKILL);
    gcl_status_t rc = gcl_instance_build(inst);
    if (rc == GCL_OK) {
        gcl_instance_number_runs(inst, gcl_membership_epoch(inst->elastic));
        gcl_membership_alarms(inst->elastic, 1);
    }
    return rc;
}

gcl_status_t gcl_elastic_rebuild(struct gcl_instance *inst)
{
    int failed = inst->run.failed, final = 0;
    gcl_status_t rc = GCL_OK;
    for (int attempt = 0; attempt < RESIZE_ATTEMPTS; attempt++) {
        gcl_err_clear(&inst->err);
        rc = resize_once(inst, failed, &final);
        /* The store's verdict, poprun gone or out of time: no resize mends it. Any other
         * failure is of the new membership's build (an instance lost meanwhile, or this one's
         * own trouble): resize again, saying so; when nothing changed the store says STOP. */
        if (rc == GCL_OK || final)
            break;
        GCL_WARN(GCL_SUB_INIT,
                 "elastic: the new membership could not be built (%s): resizing "
                 "again",
                 gcl_err_text(&inst->err));
        failed = 1;
    }
    inst->run.failed = rc != GCL_OK;
    if (rc == GCL_OK)
        GCL_INFO(GCL_SUB_INIT, "elastic: instance %d of %d, replicas %d..%d of %d",
                 inst->job.instance_index, inst->job.num_instances, inst->pd.replica_offset,
                 inst->pd.replica_offset + inst->pd.num_local_replicas - 1, inst->job.num_replicas);
    return rc;
}

int gcl_elastic_enabled(gcl_instance_t inst)
{
    return inst && inst->elastic;
}

gcl_status_t gcl_elastic_info(gcl_instance_t inst, gcl_elastic_info_t *out)
{
    if (!inst || !out)
        return GCL_ERR_INVALID_ARGUMENT;
    if (!inst->elastic)
        return GCL_ERR_NOT_SUPPORTED;
    gcl_membership_info(inst->elastic, out);
    return GCL_OK;
}
