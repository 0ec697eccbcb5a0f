/* The table of transports, in order of preference, and the choice of one per peer. Declared in
 * transport/transport.h. */
#include "transport/transport.h"

static const gcl_transport_t *const table[] = {
    &gcl_transport_local, &gcl_transport_shm, &gcl_transport_tcp,
    &gcl_transport_ofi,   &gcl_transport_mpi,
};

const gcl_transport_t *gcl_transport_pick(const gcl_fabric_t *f, int me, int peer)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const gcl_transport_t *t = table[i];
        /* GCL_TRANSPORT=tcp, ofi or mpi carries everything between instances, even on one host. */
        if (f->forced && t != &gcl_transport_local && t != f->forced)
            continue;
        if (t->can_connect(f, me, peer))
            return t;
    }
    return &gcl_transport_local; /* unreachable for a valid job; its checks fail loudly */
}
