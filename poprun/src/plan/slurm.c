/*
 * The Slurm allocation poprun runs in; the variables and rules are in slurm.h.
 *
 * Example: sbatch -N 2 --ntasks-per-node 2 gives SLURM_JOB_NODELIST=h[1-2] and
 * SLURM_TASKS_PER_NODE=2(x2): nodes h1 and h2 of 2 tasks each, 4 in all. --num-instances 4 puts
 * instances 0-1 on h1 and 2-3 on h2; --num-instances 2 one on each; --num-instances 8 is
 * refused (8 instances, 4 tasks).
 */
#include "plan/slurm.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/hostlist.h"

/* Largest task count of one node, and of a repeat, taken from a variable. */
#define SLURM_COUNT_MAX 1000000

/* Reads a decimal number from 1 to SLURM_COUNT_MAX at *P; advances *P. */
static bool read_count(const char **p, int *v)
{
    const char *s = *p;
    long x = 0;
    while (*s >= '0' && *s <= '9' && x <= SLURM_COUNT_MAX)
        x = x * 10 + (*s++ - '0');
    if (s == *p || x < 1 || x > SLURM_COUNT_MAX)
        return false;
    *v = (int)x;
    *p = s;
    return true;
}

/* Parses Slurm's compressed count list ("2(x3),1" is 2, 2, 2, 1) into exactly N counts. */
static int parse_counts(const char *var, const char *spec, int n, int *out, char *err,
                        size_t errlen)
{
    const char *p = spec;
    long long k = 0; /* counts so far */
    for (;;) {
        int v, times = 1;
        if (!read_count(&p, &v))
            break;
        if (strncmp(p, "(x", 2) == 0) {
            p += 2;
            if (!read_count(&p, &times) || *p != ')')
                break;
            p++;
        }
        for (long long t = k; t < k + times && t < n; t++)
            out[t] = v;
        k += times;
        if (*p == '\0') {
            if (k != n)
                return errf(err, errlen, "%s=%s gives %lld node%s, SLURM_JOB_NODELIST %d", var,
                            spec, k, k == 1 ? "" : "s", n);
            return 0;
        }
        if (*p++ != ',')
            break;
    }
    return errf(err, errlen,
                "%s=%s is not understood (expected counts such as 2 or 2(x3), separated by "
                "commas)",
                var, spec);
}

int slurm_alloc_parse(const char *job_id, const char *nodelist, const char *tasks_var,
                      const char *tasks_spec, struct slurm_alloc *a, char *err, size_t errlen)
{
    char e[512];
    memset(a, 0, sizeof(*a));
    a->job_id = xstrdup(job_id);
    if (!nodelist || !*nodelist)
        return errf(err, errlen, "Slurm allocation %s: SLURM_JOB_NODELIST is not set", job_id);
    a->nodelist = xstrdup(nodelist);
    if (hostlist_expand(nodelist, &a->nodes, e, sizeof(e)) != 0)
        return errf(err, errlen, "Slurm allocation %s: SLURM_JOB_NODELIST: %s", job_id, e);
    if (!tasks_spec || !*tasks_spec)
        return errf(err, errlen,
                    "Slurm allocation %s: neither SLURM_TASKS_PER_NODE nor "
                    "SLURM_JOB_CPUS_PER_NODE is set",
                    job_id);
    a->tasks_var = tasks_var;
    a->tasks_spec = xstrdup(tasks_spec);
    a->tasks = xcalloc((size_t)a->nodes.n, sizeof(int));
    if (parse_counts(tasks_var, tasks_spec, a->nodes.n, a->tasks, e, sizeof(e)) != 0)
        return errf(err, errlen, "Slurm allocation %s: %s", job_id, e);
    for (int i = 0; i < a->nodes.n; i++)
        a->total_tasks += a->tasks[i];
    return 0;
}

/* Whether srun is an executable on PATH. */
static bool have_srun(void)
{
    const char *path = getenv("PATH");
    char *dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    bool found = false;
    for (char *save, *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *full = xasprintf("%s/srun", *d ? d : ".");
        found = access(full, X_OK) == 0;
        free(full);
    }
    free(dirs);
    return found;
}

int slurm_alloc_from_env(struct slurm_alloc *a, char *err, size_t errlen)
{
    const char *id = getenv("SLURM_JOB_ID");
    if (!id || !*id)
        id = getenv("SLURM_JOBID");
    memset(a, 0, sizeof(*a));
    if (!id || !*id)
        return 0;
    const char *var = "SLURM_TASKS_PER_NODE", *tasks = getenv(var);
    if (!tasks || !*tasks) {
        var = "SLURM_JOB_CPUS_PER_NODE";
        tasks = getenv(var);
    }
    if (slurm_alloc_parse(id, getenv("SLURM_JOB_NODELIST"), var, tasks, a, err, errlen) != 0)
        return -1;
    /* mpirun starts its daemons on the nodes of an allocation with srun. */
    if (!have_srun())
        return errf(err, errlen,
                    "SLURM_JOB_ID is set (Slurm allocation %s) but srun is not on PATH: mpirun "
                    "starts its daemons on the nodes with srun (is Slurm installed?)",
                    id);
    return 1;
}

/* Refuses more instances than tasks. */
static int check_total(const struct slurm_alloc *a, int num_instances, char *err, size_t errlen)
{
    if (num_instances <= a->total_tasks)
        return 0;
    return errf(err, errlen,
                "%d instances exceed the %d task%s of Slurm allocation %s (%s=%s on %s): ask "
                "Slurm for more tasks (sbatch -n, --ntasks-per-node) or start fewer instances",
                num_instances, a->total_tasks, a->total_tasks == 1 ? "" : "s", a->job_id,
                a->tasks_var, a->tasks_spec, a->nodelist);
}

int slurm_alloc_pick(const struct slurm_alloc *a, int num_instances, struct strvec *hosts,
                     char *err, size_t errlen)
{
    if (check_total(a, num_instances, err, errlen) != 0)
        return -1;
    for (int h = a->nodes.n; h >= 1; h--) {
        bool fits = num_instances % h == 0;
        for (int i = 0; i < h && fits; i++)
            fits = num_instances / h <= a->tasks[i];
        if (!fits)
            continue;
        for (int i = 0; i < h; i++)
            strvec_push(hosts, a->nodes.v[i]);
        return 0;
    }
    return errf(err, errlen,
                "%d instances cannot go to the nodes of Slurm allocation %s the same number on "
                "each (%s=%s on %s); name the hosts with -H, or ask for tasks that divide them",
                num_instances, a->job_id, a->tasks_var, a->tasks_spec, a->nodelist);
}

int slurm_alloc_check(const struct slurm_alloc *a, const struct strvec *hosts, int num_instances,
                      const char *from, char *err, size_t errlen)
{
    if (check_total(a, num_instances, err, errlen) != 0)
        return -1;
    int per_host = hosts->n > 0 ? (num_instances + hosts->n - 1) / hosts->n : num_instances;
    for (int h = 0; h < hosts->n; h++) {
        int k = 0;
        while (k < a->nodes.n && strcmp(a->nodes.v[k], hosts->v[h]) != 0)
            k++;
        if (k == a->nodes.n)
            return errf(err, errlen, "host %s (%s) is not a node of Slurm allocation %s (%s)",
                        hosts->v[h], from, a->job_id, a->nodelist);
        if (per_host > a->tasks[k])
            return errf(err, errlen,
                        "%d instances on host %s exceed its %d task%s in Slurm allocation %s "
                        "(%s=%s on %s)",
                        per_host, hosts->v[h], a->tasks[k], a->tasks[k] == 1 ? "" : "s", a->job_id,
                        a->tasks_var, a->tasks_spec, a->nodelist);
    }
    return 0;
}

char *slurm_alloc_describe(const struct slurm_alloc *a)
{
    return xasprintf("Slurm allocation %s: nodes %s (SLURM_JOB_NODELIST), tasks %s (%s)", a->job_id,
                     a->nodelist, a->tasks_spec, a->tasks_var);
}

void slurm_alloc_free(struct slurm_alloc *a)
{
    free(a->job_id);
    free(a->nodelist);
    free(a->tasks_spec);
    free(a->tasks);
    strvec_free(&a->nodes);
    memset(a, 0, sizeof(*a));
}
