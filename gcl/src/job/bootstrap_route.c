/*
 * How OpenMPI carries the MPI bootstrap, chosen before MPI_Init from this process's
 * environment; a value the user set always wins. Declared in job/bootstrap.h.
 *
 * Where MPI is only the bootstrap (MESSAGES is 0: libgcl's own transports carry the job), its
 * few calls need no tcp BTL, and OpenMPI 4.1's tcp BTL costs two things:
 * - a stranger who connects to its port and sends one byte froze every MPI call of the instance
 *   for as long as it held the connection (the BTL reads the handshake with a blocking recv
 *   inside opal_progress; gcl_preempt_agree's exchange in every training step waited behind
 *   it: chaos_attack). Its progress thread (btl_tcp_progress_thread=1) moves that read out of
 *   the way;
 * - with that thread, the component's close inside MPI_Finalize frees its event base and then
 *   deletes an event of it: reads of freed memory that valgrind reports on every instance
 *   (open-mpi/ompi#5902), once suppressed in tests/faults/valgrind.supp.
 * So the bootstrap leaves the tcp BTL out (btl=self,vader): on one host, where OpenMPI's
 * launcher says every rank of the job is local (OMPI_COMM_WORLD_LOCAL_SIZE equals
 * OMPI_COMM_WORLD_SIZE; for an srun step, SLURM_STEP_NUM_NODES is 1), shared memory carries
 * it; across hosts, when libfabric offers OpenMPI's ofi MTL a provider of tagged reliable
 * datagrams, OpenMPI's cm PML carries it over libfabric (pml=cm). No port for a stranger to
 * hold, no thread, no freed memory read. Where neither holds, or the user chose the BTLs
 * (OMPI_MCA_btl), the tcp BTL stays and runs its progress thread, as before.
 *
 * Where the mpi transport carries the job's messages, OpenMPI's ob1 PML is asked for: its cm
 * PML over libfabric lost messages under load (of 12 runs of allreduce-check over 4 instances
 * with GCL_TRANSPORT=mpi, 4 waited for a message that never came; 0 of 6 with ob1).
 */
#include "job/bootstrap.h"

#include <stdlib.h>
#include <string.h>

#ifdef GCL_HAVE_OFI
#include <rdma/fabric.h>
#endif

/* Whether OpenMPI's launcher put every rank of the job on this host; or, for the tasks of an
 * srun step (which OpenMPI's variables name only after MPI_Init), Slurm's. */
static int one_host(void)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE"), *all = getenv("OMPI_COMM_WORLD_SIZE");
    const char *nodes = getenv("SLURM_STEP_NUM_NODES");
    if (!all && getenv("SLURM_STEP_ID") && nodes)
        return atoi(nodes) == 1;
    return local && all && atoi(local) > 0 && atoi(local) == atoi(all);
}

/* Whether libfabric offers a provider that OpenMPI 4.1's ofi MTL would take: tagged messages on
 * reliable datagram endpoints, from a provider not in the MTL's default exclusion list
 * (mtl_ofi_provider_exclude: shm, sockets, tcp, udp, rstream; "tcp;ofi_rxm" is not "tcp"). */
static int mtl_provider(void)
{
#ifdef GCL_HAVE_OFI
    static const char *const excluded[] = {"shm", "sockets", "tcp", "udp", "rstream"};
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    if (!hints)
        return 0;
    hints->caps = FI_TAGGED;
    hints->ep_attr->type = FI_EP_RDM;
    int found = 0;
    if (fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &info) == 0) {
        for (struct fi_info *i = info; i && !found; i = i->next) {
            const char *prov = i->fabric_attr ? i->fabric_attr->prov_name : NULL;
            found = prov != NULL;
            for (size_t k = 0; found && k < sizeof excluded / sizeof excluded[0]; k++)
                found = strcmp(prov, excluded[k]) != 0;
        }
        fi_freeinfo(info);
    }
    fi_freeinfo(hints);
    return found;
#else
    return 0;
#endif
}

void gcl_boot_mpi_route(int messages)
{
    if (messages) {
        setenv("OMPI_MCA_pml", "ob1", 0);
        return;
    }
    const char *pml = getenv("OMPI_MCA_pml");
    if (!getenv("OMPI_MCA_btl")) {
        if (one_host()) {
            setenv("OMPI_MCA_btl", "self,vader", 0);
            return;
        }
        if ((!pml || strcmp(pml, "cm") == 0) && mtl_provider()) {
            setenv("OMPI_MCA_btl", "self,vader", 0);
            setenv("OMPI_MCA_pml", "cm", 0);
            return;
        }
    }
    setenv("OMPI_MCA_btl_tcp_progress_thread", "1", 0);
}
