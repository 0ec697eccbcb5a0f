/* Setting up the transports an instance needs, and tearing them down. */
#ifndef GCL_TRANSPORT_SETUP_H
#define GCL_TRANSPORT_SETUP_H

#include "base/err.h"
#include "base/param.h"
#include "job/bootstrap.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "transport/transport.h"

/* What setting the transports up takes: the instance's parameters, the job's layout, the
 * bootstrap (collective over the instances), the host's shared state, and where the result
 * and a failure go. */
typedef struct {
    const gcl_params_t *params;
    const gcl_job_t *job;
    gcl_boot_t *boot;
    gcl_host_t *host;
    gcl_fabric_t *fabric; /* filled in */
    gcl_err_t *err;
} gcl_transport_setup_t;

/* Which backends the job needs: forced by GCL_TRANSPORT, or (auto) between hosts tcp when it
 * connects every instance, else ofi when libfabric works on every instance, else mpi. Every
 * instance decides the same. Collective over the instances; fills *W->fabric. Failures go to
 * W->err. */
gcl_status_t gcl_transports_init(const gcl_transport_setup_t *w);
void gcl_transports_fini(gcl_fabric_t *f);

#endif /* GCL_TRANSPORT_SETUP_H */
