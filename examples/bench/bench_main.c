/* gcl-bench: see bench.h and --help. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "common/init_error.h"
#include "gcl/sim.h"

/* The group (-g) must divide the job's replicas: checked as soon as their count is known,
 * before anything runs, and said once (by instance 0). Returns 0 or 2. */
static int check_group(const bench_opts_t *o, const gcl_job_info_t *info)
{
    int n = info->num_replicas, k = o->group.size;
    if (o->group.kind == GCL_GROUP_ALL || (k >= 1 && k <= n && n % k == 0))
        return 0;
    if (info->instance_index == 0) {
        char g[64];
        fprintf(stderr,
                "gcl-bench: -g '%s': a group of %d does not divide the %d replicas; expected all, "
                "or consecutive:K or orthogonal:K with K dividing %d\n",
                gcl_group_format(o->group, g, sizeof g), k, n, n);
    }
    return 2;
}

/* --json and --csv must be writable before anything runs: opened for appending, and removed
 * again if that made them. Instance 0 writes them at the end; every instance looks (the same
 * path, on its host), so that all stop together, and instance 0 says why. Returns 0 or 2. */
static int check_output(const char *opt, const char *path, const gcl_job_info_t *info)
{
    if (!path)
        return 0;
    int existed = access(path, F_OK) == 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        if (info->instance_index == 0)
            fprintf(stderr,
                    "gcl-bench: %s '%s': cannot write it (%s); expected a file in a writable "
                    "directory\n",
                    opt, path, strerror(errno));
        return 2;
    }
    fclose(f);
    if (!existed)
        remove(path);
    return 0;
}

/* A broadcast's root must be a rank of its group, which the job's replica count sizes: checked
 * as soon as that is known, before anything runs, and said once (by instance 0; every instance
 * comes to the same answer). Returns 0 or 2. */
static int check_root(const bench_opts_t *o, const gcl_job_info_t *info)
{
    int n = info->num_replicas, size = o->group.kind == GCL_GROUP_ALL ? n : o->group.size;
    if (strcmp(o->collective, "broadcast") != 0 || o->root < size)
        return 0;
    if (size < 1 || n % size != 0)
        return 0; /* check_group said so */
    if (info->instance_index == 0) {
        char g[64], of[64] = "";
        if (o->group.kind != GCL_GROUP_ALL)
            snprintf(of, sizeof of, "%d of ", size);
        fprintf(stderr,
                "gcl-bench: -r '%d': expected a rank of the group, 0 to %d (group %s: %sthe %d "
                "replicas)\n",
                o->root, size - 1, gcl_group_format(o->group, g, sizeof g), of, n);
    }
    return 2;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, &o);
    if (prc)
        return prc == 1 ? 0 : 2;
    const char *env_phantom = getenv("GCL_SIM_PHANTOM");
    if (env_phantom && !strcmp(env_phantom, "1")) /* poprun --offline-mode */
        o.phantom = 1;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = o.replicas;
    cfg.ipus_per_replica = 1;
    cfg.phantom = o.phantom;
    cfg.topology = o.topology;
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    if (rc != GCL_OK) {
        if (example_init_usage_error("gcl-bench", rc))
            return 2;
        fprintf(stderr, "gcl-bench: gcl_init failed: %s\n", gcl_status_string(rc));
        return 1;
    }
    bench_t *b = calloc(1, sizeof *b);
    b->o = &o;
    gcl_instance_info(inst, &b->info);
    snprintf(b->topology, sizeof b->topology, "%s", gcl_sim_topology(inst));
    if (check_group(&o, &b->info) || check_root(&o, &b->info) ||
        check_output("--json", o.json, &b->info) || check_output("--csv", o.csv, &b->info)) {
        gcl_finalize(inst);
        free(b);
        return 2;
    }
    if (o.compare_in_job && (b->info.num_instances < 2 || b->info.num_local_replicas * 1 != 1)) {
        if (b->info.instance_index == 0)
            fprintf(stderr,
                    "gcl-bench: --compare mpi-in-job needs one replica per instance and at least "
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
