/*
 * The shared main of the nccl-tests tools: the command line, gcl_init (mpirun's ranks are the
 * instances when poprun did not start them), one replica thread per rank, the footer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/init_error.h"
#include "common/ref.h"
#include "nccl.h"

/* -g/-t against the replicas poprun gave this instance, and -r against the ranks. Returns 0,
 * or 2 after one line (from instance 0). */
static int check_shape(const nccl_coll_t *tool, nccl_opts_t *o, const gcl_job_info_t *info)
{
    char why[256] = "";
    int local = info->num_local_replicas;
    if (o->ngpus_set && local != o->nthreads * o->ngpus)
        snprintf(why, sizeof why,
                 "-t %d x -g %d is %d ranks per process, but poprun gave this instance %d "
                 "replica%s (leave -g out, or make them agree)",
                 o->nthreads, o->ngpus, o->nthreads * o->ngpus, local, local == 1 ? "" : "s");
    else if (local % o->nthreads != 0)
        snprintf(why, sizeof why, "-t %d does not divide the %d replicas of this instance",
                 o->nthreads, local);
    else if (tool->rooted && o->root >= info->num_replicas)
        snprintf(why, sizeof why, "-r %d: expected a rank from 0 to %d, or all", o->root,
                 info->num_replicas - 1);
    if (!why[0])
        return 0;
    if (info->instance_index == 0)
        fprintf(stderr, "%s: %s\n", tool->name, why);
    return 2;
}

int nccl_main(const nccl_coll_t *tool, int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    nccl_opts_t o;
    int prc = nccl_parse(tool, argc, argv, &o);
    if (prc)
        return prc == 1 ? 0 : 2;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = o.nthreads * o.ngpus;
    cfg.mpi_world = 1; /* mpirun -np N TOOL -g G: N instances of G replicas */
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    if (rc != GCL_OK) {
        if (example_init_usage_error(tool->name, rc))
            return 2;
        fprintf(stderr, "%s: gcl_init failed: %s\n", tool->name, gcl_init_error());
        return 1;
    }
    nccl_job_t job = {.tool = tool, .o = &o, .argc = argc, .argv = argv};
    gcl_instance_info(inst, &job.info);
    int status = check_shape(tool, &o, &job.info);
    if (status == 0) {
        rc = gcl_run(inst, nccl_program, &job); /* rank 0's first IPU prints the header */
        if (rc == GCL_OK && job.info.instance_index == 0)
            status = nccl_report_footer(&job);
        else if (rc != GCL_OK && job.usage_error) {
            if (job.usage[0])
                fprintf(stderr, "%s: %s\n", tool->name, job.usage);
            status = 2;
        } else if (rc != GCL_OK) {
            const char *detail = job.failed ? job.error : gcl_instance_error(inst);
            fprintf(stderr, "%s: %s\n", tool->name, detail);
            status = nccl_report_failure(&job, detail);
        }
    }
    gcl_finalize(inst);
    return status;
}
