/* Setting up the transports an instance needs, and tearing them down. */
#ifndef GCL_TRANSPORT_INIT_H
#define GCL_TRANSPORT_INIT_H

#include "instance/instance.h"

/* Which backends the job needs: forced by GCL_TRANSPORT, or (auto) ofi between hosts when
 * libfabric works on every instance, else mpi. Every instance decides the same. Collective
 * over the instances; fills inst->fabric. Failures go to inst->err. */
gcl_status_t gcl_transports_init(struct gcl_instance *inst);
void gcl_transports_fini(struct gcl_instance *inst);

#endif /* GCL_TRANSPORT_INIT_H */
