/* sim-step: see simstep.h and --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcl/sim.h"
#include "simstep.h"

/* Instance 0: the summary, the sensitivity table when asked, and the JSON file. */
static int report(simstep_t *w)
{
    char *json = NULL;
    int status = 0;

    simstep_print(w);
    if (w->o.sensitivity)
        status = simstep_sensitivity(w, w->o.topology ? w->o.topology : w->topology, &json);
    if (w->o.json && simstep_write_json(w, json) != 0)
        status = 1;
    free(json);
    return status;
}

int main(int argc, char **argv)
{
    simstep_t *w = calloc(1, sizeof *w);
    int status;

    if (!w) {
        fprintf(stderr, "sim-step: out of memory\n");
        return 1;
    }
    status = simstep_parse(argc, argv, &w->o);
    if (status == 1) { /* --help */
        free(w);
        return 0;
    }
    if (status == 0)
        status = simstep_open_model(w);
    if (status == 0 && w->o.dump_model) {
        status = gcl_sim_model_write(w->model, stdout) == GCL_OK ? 0 : 1;
    } else if (status == 0 && w->o.plan) {
        status = simstep_plan(w);
    } else if (status == 0) {
        status = simstep_run_job(w, 1, w->o.topology);
        if (status == 0 && w->info.instance_index == 0)
            status = report(w);
    }
    gcl_sim_model_free(w->model);
    free(w);
    return status;
}
