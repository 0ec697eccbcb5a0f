/* sim-step: see simstep.h and --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/init_error.h" /* header only: sim-step does not link the examples' library */
#include "gcl/sim.h"
#include "simstep.h"

/* Runs the job once gcl_init has succeeded; returns the exit status. */
static int run_job(gcl_instance_t inst, simstep_t *w)
{
    gcl_instance_info(inst, &w->info);
    snprintf(w->topology, sizeof w->topology, "%s", gcl_sim_topology(inst));
    /* Every instance sees the same job and options, so all of them agree on a refusal. */
    int status = simstep_resolve(w);
    if (status)
        return status;
    gcl_status_t rc = gcl_run(inst, simstep_program, w);
    if (rc != GCL_OK) {
        /* Peers of a failed instance only know that it failed; its own message says why. */
        if (w->error[0])
            fprintf(stderr, "sim-step: %s\n", w->error);
        else if (w->info.instance_index == 0)
            fprintf(stderr, "sim-step: %s\n", gcl_instance_error(inst));
        return 1;
    }
    return w->info.instance_index == 0 ? simstep_report(w) : 0;
}

int main(int argc, char **argv)
{
    simstep_t *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "sim-step: out of memory\n");
        return 1;
    }
    int status = simstep_parse(argc, argv, &w->o);
    if (status) {
        free(w);
        return status == 1 ? 0 : 2;
    }
    /* The model's buffers are never allocated: always phantom, as poprun --offline-mode. */
    setenv("GCL_SIM_PHANTOM", "1", 1);
    if (w->o.topology)
        setenv("GCL_TOPOLOGY", w->o.topology, 1);
    gcl_config_t cfg = {(int)w->o.replicas, w->o.stages ? (int)w->o.stages : 1};
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    if (rc != GCL_OK) {
        free(w);
        if (example_init_usage_error("sim-step", rc))
            return 2;
        fprintf(stderr, "sim-step: gcl_init failed: %s\n", gcl_status_string(rc));
        return 1;
    }
    status = run_job(inst, w);
    gcl_finalize(inst);
    free(w);
    return status;
}
