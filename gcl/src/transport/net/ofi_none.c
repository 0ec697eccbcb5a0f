/*
 * The ofi transport when libgcl is built without libfabric (cmake -DGCL_WITH_OFI=OFF): it is
 * never available, so GCL_TRANSPORT=auto uses mpi between hosts and GCL_TRANSPORT=ofi fails
 * with this reason. Declared in transport/net/backends.h.
 */
#include <stdio.h>

#include "transport/net/backends.h"

gcl_status_t gcl_net_ofi_create(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                                gcl_net_t **out, char *err, size_t len)
{
    (void)p, (void)j, (void)boot;
    *out = NULL;
    snprintf(err, len, "this libgcl was built without the ofi transport (GCL_WITH_OFI=OFF)");
    return GCL_ERR_NOT_SUPPORTED;
}
