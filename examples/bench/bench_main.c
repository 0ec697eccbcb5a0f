/* gcl-bench: see bench.h and --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gcl/sim.h"

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, &o);
    if (prc)
        return prc == 1 ? 0 : 2;
    const char *env_phantom = getenv("GCL_SIM_PHANTOM");
    if (env_phantom && !strcmp(env_phantom, "1")) /* poprun --offline-mode */
        o.phantom = 1;
    if (o.phantom)
        setenv("GCL_SIM_PHANTOM", "1", 1);
    if (o.topology)
        setenv("GCL_TOPOLOGY", o.topology, 1);
    gcl_config_t cfg = {o.replicas, 1};
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    if (rc != GCL_OK) {
        fprintf(stderr, "gcl-bench: gcl_init failed: %s\n", gcl_status_string(rc));
        return rc == GCL_ERR_INVALID_ARGUMENT ? 2 : 1;
    }
    bench_t *b = calloc(1, sizeof *b);
    b->o = &o;
    gcl_instance_info(inst, &b->info);
    snprintf(b->topology, sizeof b->topology, "%s", gcl_sim_topology(inst));
    if (o.compare_mpi && (b->info.num_instances < 2 || b->info.num_local_replicas * 1 != 1)) {
        if (b->info.instance_index == 0)
            fprintf(stderr, "gcl-bench: --compare mpi needs one replica per instance and at least "
                            "two instances (poprun --num-replicas N --num-instances N)\n");
        gcl_finalize(inst);
        free(b);
        return 2;
    }
    b->memcpy_gbs = -1;
    if (o.memcpy_ref && b->info.instance_index == 0)
        b->memcpy_gbs = bench_memcpy_gbs(o.max_bytes);
    rc = gcl_run(inst, bench_program, b);
    int status = 0;
    if (b->info.instance_index == 0) {
        if (bench_report(b, b->info.num_replicas) != 0)
            status = 1;
        if (rc != GCL_OK)
            fprintf(stderr, "gcl-bench: %s\n", b->error[0] ? b->error : gcl_instance_error(inst));
    }
    for (int i = 0; i < b->nrows; i++)
        status |= b->rows[i].wrong != 0;
    if (rc != GCL_OK)
        status = 1;
    gcl_finalize(inst);
    free(b);
    return status;
}
