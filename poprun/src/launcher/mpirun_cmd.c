/*
 * The mpirun argument vector; see mpirun_cmd.h.
 */
#include "launcher/mpirun_cmd.h"

#include <gcl/elastic_store.h>
#include <gcl/popdist_env.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hidden.h"
#include "common/words.h"

static void push_int(struct strvec *argv, const char *opt, int v)
{
    strvec_push(argv, opt);
    strvec_push_take(argv, xasprintf("%d", v));
}

/* "h1:2,h2:2": every host with its number of instances as slots. */
static char *host_slots(const struct plan *p)
{
    struct strvec items = STRVEC_INIT;
    for (int h = 0; h < p->hosts.n; h++)
        strvec_push_take(&items, xasprintf("%s:%d", p->hosts.v[h], p->instances_per_host));
    char *s = strvec_join(&items, ",");
    strvec_free(&items);
    return s;
}

/* Splits the words of an --mpi-*-args option onto ARGV. */
static int push_words(struct strvec *argv, const char *opt, const char *value, char *err,
                      size_t errlen)
{
    char e[128];
    if (value && words_split(value, argv, e, sizeof(e)) != 0)
        return errf(err, errlen, "--%s: %s", opt, e);
    return 0;
}

/* Whether the words of GLOBAL set MCA parameter NAME (--mca NAME V, -mca NAME V): mpirun
 * refuses a parameter given twice, and the user's own setting wins. */
static bool sets_mca(const char *global, const char *name)
{
    struct strvec w = STRVEC_INIT;
    char e[128];
    bool found = false;
    if (global && words_split(global, &w, e, sizeof(e)) == 0) {
        for (int i = 0; i + 1 < w.n && !found; i++)
            found =
                (!strcmp(w.v[i], "--mca") || !strcmp(w.v[i], "-mca")) && !strcmp(w.v[i + 1], name);
    }
    strvec_free(&w);
    return found;
}

/* --host-subnet: mpirun's tcp traffic on SUBNET (OpenMPI takes a subnet or an interface name). */
static void push_subnet(struct strvec *argv, const char *subnet, const char *global)
{
    const char *mca[] = {"btl_tcp_if_include", "oob_tcp_if_include"};
    for (int i = 0; i < 2; i++) {
        if (sets_mca(global, mca[i]))
            continue;
        strvec_push(argv, "--mca");
        strvec_push(argv, mca[i]);
        strvec_push(argv, subnet);
    }
}

/* Across hosts: mpirun and its daemons probe their idle connections after 2 s of silence, each
 * second, and give up after 3 unanswered probes. A host that falls off the network (its link
 * down, no connection ever closed) is then lost to mpirun within about 5 s, which ends the job,
 * and its daemon ends its instances; OpenMPI's default (300 s, then 9 x 20 s) keeps both for 8
 * minutes. The kernel answers the probes, so a busy host is not taken for a lost one. A value
 * the user set (in --mpi-global-args or as OMPI_MCA_*) wins. */
static void push_keepalive(struct strvec *argv, const char *global)
{
    static const char *const mca[][2] = {{"oob_tcp_keepalive_time", "2"},
                                         {"oob_tcp_keepalive_intvl", "1"},
                                         {"oob_tcp_keepalive_probes", "3"}};
    for (size_t i = 0; i < sizeof mca / sizeof mca[0]; i++) {
        char env[64];
        snprintf(env, sizeof env, "OMPI_MCA_%s", mca[i][0]);
        if (sets_mca(global, mca[i][0]) || getenv(env))
            continue;
        strvec_push(argv, "--mca");
        strvec_push(argv, mca[i][0]);
        strvec_push(argv, mca[i][1]);
    }
}

/* A job on this host alone: OpenMPI's session directories in the job's own directory. OpenMPI
 * 4.1 makes every job's in one parent per machine (ompi.NODE.UID in $TMPDIR or /tmp), which the
 * last job to leave removes, and fails a job whose mkdir of the parent finds it there while
 * another job's clean-up removes it before its stat (jobdir.h; open-mpi/ompi#8510, where
 * CTest-driven jobs met it too). orte_tmpdir_base, because 4.1
 * refuses orte_local_tmpdir_base in every MPI program it starts (mpirun hands the program both);
 * it would name the base on other hosts too, where nothing would remove the job's directory,
 * so a job across hosts keeps OpenMPI's own. A base the user set (orte_tmpdir_base,
 * orte_local_tmpdir_base or orte_remote_tmpdir_base, in --mpi-global-args or as OMPI_MCA_*)
 * wins. */
static void push_session_base(struct strvec *argv, const char *dir, const char *global)
{
    static const char *const mca[] = {"orte_tmpdir_base", "orte_local_tmpdir_base",
                                      "orte_remote_tmpdir_base"};
    for (size_t i = 0; i < sizeof mca / sizeof mca[0]; i++) {
        char env[64];
        snprintf(env, sizeof env, "OMPI_MCA_%s", mca[i]);
        if (!dir || sets_mca(global, mca[i]) || getenv(env))
            return;
    }
    strvec_push(argv, "--mca");
    strvec_push(argv, "orte_tmpdir_base");
    strvec_push(argv, dir);
}

/* Inside a Slurm allocation mpirun starts its daemons with srun, as job steps, and orted must
 * outlive the SIGTERM Slurm gives a preempted step (orted_agent.h). The user's own agent wins. */
static void push_launch_agent(struct strvec *argv, const char *self, const char *global)
{
    const char *env = getenv("OMPI_MCA_orte_launch_agent");
    if (sets_mca(global, "orte_launch_agent") || (env && *env))
        return;
    strvec_push(argv, "--mca");
    strvec_push(argv, "orte_launch_agent");
    strvec_push_take(argv, xasprintf("%s %s", self, POPRUN_OPT_ORTED));
}

/* --elastic: mpirun goes on when an instance dies (the others resize through poprun's store),
 * and every instance, on every host, learns where the store is. */
static void push_elastic(struct strvec *argv)
{
    static const char *const names[] = {GCL_ELASTIC_ENV_STORE, GCL_ELASTIC_ENV_TOKEN,
                                        GCL_ELASTIC_ENV_MIN_REPLICAS};
    strvec_push(argv, "--enable-recovery");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        strvec_push(argv, "-x");
        strvec_push(argv, names[i]);
    }
}

/* "-x NAME[=VALUE]" for every word of the -x list TEXT. */
static int push_exports(struct strvec *argv, const char *text, char *err, size_t errlen)
{
    struct strvec words = STRVEC_INIT;
    char e[128];
    int rc = text ? words_split(text, &words, e, sizeof(e)) : 0;
    for (int i = 0; rc == 0 && i < words.n; i++) {
        strvec_push(argv, "-x");
        strvec_push(argv, words.v[i]);
    }
    strvec_free(&words);
    return rc == 0 ? 0 : errf(err, errlen, "-x: %s", e);
}

/* The wrapper's command: poprun itself in instance mode, then the program. */
static void push_wrapper(const struct mpirun_cmd *c, struct strvec *argv)
{
    const struct poprun_options *o = c->opts;
    const struct plan *p = c->plan;
    strvec_push(argv, c->self);
    strvec_push(argv, POPRUN_OPT_INSTANCE);
    strvec_push(argv, c->token);
    push_int(argv, "--num-replicas", p->num_replicas);
    push_int(argv, "--num-instances", p->num_instances);
    push_int(argv, "--ipus-per-replica", p->ipus_per_replica);
    push_int(argv, "--num-ilds", p->num_ilds);
    if (c->topology) {
        strvec_push(argv, "--topology");
        strvec_push(argv, c->topology);
    }
    if (!p->local) {
        strvec_push(argv, "--host");
        strvec_push_take(argv, strvec_join(&p->hosts, ","));
    }
    if (o->offline_mode > 0)
        strvec_push(argv, "--offline-mode");
    if (c->placement)
        strvec_push_take(argv, xasprintf("--process-placement=%s", c->placement));
    if (o->host_subnet) {
        strvec_push(argv, "--host-subnet");
        strvec_push(argv, o->host_subnet);
    }
    if (c->cache_path) {
        strvec_push(argv, "--executable-cache-path");
        strvec_push(argv, c->cache_path);
    }
    if (o->only_output_from_instance >= 0)
        push_int(argv, "--only-output-from-instance", o->only_output_from_instance);
    for (int v = 0; v < o->verbose && v < 9; v++)
        strvec_push(argv, "-v");
    strvec_push(argv, "--");
    strvec_extend(argv, &o->program);
}

int mpirun_cmd_build(const struct mpirun_cmd *c, struct strvec *argv, char *err, size_t errlen)
{
    strvec_push(argv, c->mpirun);
    if (c->as_root)
        strvec_push(argv, "--allow-run-as-root");
    strvec_push(argv, "--oversubscribe");
    strvec_push(argv, "--bind-to");
    strvec_push(argv, "none");
    if (c->plan->local)
        push_session_base(argv, c->job_dir, c->opts->mpi_global_args);
    if (!c->plan->local) {
        strvec_push(argv, "--host");
        strvec_push_take(argv, host_slots(c->plan));
        strvec_push(argv, "--map-by");
        strvec_push(argv, "slot");
        push_keepalive(argv, c->opts->mpi_global_args);
        if (c->slurm)
            push_launch_agent(argv, c->self, c->opts->mpi_global_args);
    }
    if (c->opts->host_subnet)
        push_subnet(argv, c->opts->host_subnet, c->opts->mpi_global_args);
    if (c->opts->elastic) /* poprun's store: elastic_job.h */
        push_elastic(argv);
    else if (c->opts->max_restarts > 0) { /* set by the restart loop: every host must see it */
        strvec_push(argv, "-x");
        strvec_push(argv, POPDIST_ENV_RESTART_COUNT);
    }
    if (push_words(argv, "mpi-global-args", c->opts->mpi_global_args, err, errlen) != 0)
        return -1;
    push_int(argv, "-np", c->plan->num_instances);
    if (c->job_id) {
        strvec_push(argv, "-x");
        strvec_push_take(argv, xasprintf("%s=%s", POPRUN_ENV_JOB_ID, c->job_id));
    }
    if (push_exports(argv, c->opts->export_env, err, errlen) != 0 ||
        push_words(argv, "mpi-local-args", c->opts->mpi_local_args, err, errlen) != 0)
        return -1;
    push_wrapper(c, argv);
    return 0;
}
