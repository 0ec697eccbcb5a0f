/* A group of IPUs as the engines see it: its ranks, where they run, the transport to each. */
#include "engine/peers.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

gcl_status_t gcl_peers_init(gcl_peers_t *p, gcl_ipu_t *ipu, int size, gcl_err_t *record)
{
    memset(p, 0, sizeof *p);
    p->ipu = ipu;
    p->size = size;
    p->record = record;
    p->members = gcl_malloc((size_t)size * sizeof(int));
    p->ipus = gcl_malloc((size_t)size * sizeof(int));
    p->node_of = gcl_malloc((size_t)size * sizeof(int));
    p->host_of = gcl_malloc((size_t)size * sizeof(int));
    p->tp = gcl_malloc((size_t)size * sizeof *p->tp);
    if (!p->members || !p->ipus || !p->node_of || !p->host_of || !p->tp) {
        gcl_peers_free(p);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    return GCL_OK;
}

void gcl_peers_place(gcl_peers_t *p)
{
    const gcl_job_t *j = p->ipu->job;
    p->one_host = p->one_process = 1;
    for (int r = 0; r < p->size; r++) {
        int ipu = p->ipus[r];
        p->node_of[r] = j->ipu_instance[ipu];
        p->host_of[r] = j->peers[j->ipu_instance[ipu]].host;
        p->one_host &= j->ipu_hostlocal[ipu] >= 0;
        p->one_process &= j->ipu_instance[ipu] == j->instance_index;
        p->tp[r] = gcl_transport_pick(p->ipu->fabric, p->ipu->global_ipu, ipu);
    }
}

void gcl_charge_memo_free(gcl_charge_memo_t *m)
{
    free(m->mult);
    memset(m, 0, sizeof *m);
}

void gcl_peers_free(gcl_peers_t *p)
{
    gcl_charge_memo_free(&p->charge);
    free(p->replay.offsets);
    free(p->scratch.counts);
    free(p->scratch.entry);
    free(p->scratch.seen);
    free(p->scratch.xfers);
    free(p->scratch.fold);
    memset(&p->replay, 0, sizeof p->replay);
    memset(&p->scratch, 0, sizeof p->scratch);
    free(p->members);
    free(p->ipus);
    free(p->node_of);
    free(p->pod_node_of);
    free(p->host_of);
    free(p->tp);
    p->members = p->ipus = p->node_of = p->pod_node_of = p->host_of = NULL;
    p->tp = NULL;
}
