/*
 * poprun's main flow; see job.h.
 *
 *   options -> checks (program, hosts, ranges) -> topology (sim) -> plan -> mpirun argv
 *           -> [--export-config] [--print-topology] [-v] -> --dry-run stops here
 *           -> launch mpirun -> outcome -> exit status (or, with --max-restarts, launch again)
 */
#include "launcher/job.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/config_file.h"
#include "launcher/elastic/elastic_job.h"
#include "plan/hostlist.h"
#include "launcher/janitor.h"
#include "common/jobdir.h"
#include "launcher/launch.h"
#include "launcher/mpirun_cmd.h"
#include "plan/binding.h"
#include "plan/plan.h"
#include "plan/print.h"
#include "launcher/restart.h"
#include "plan/slurm.h"
#include "plan/topo.h"
#include "common/words.h"

/* Whether PATH names an executable regular file. */
static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Checks the program as execvp would find it: a path if it holds '/', else a PATH search. */
static int check_program(const struct poprun_options *o, char *err, size_t errlen)
{
    if (o->program.n == 0)
        return errf(err, errlen, "no program to run (usage: poprun [options] PROGRAM [ARGS...])");
    const char *prog = o->program.v[0];
    if (strchr(prog, '/'))
        return is_executable(prog) ? 0 : errf(err, errlen, "%s: not found or not executable", prog);
    const char *path = getenv("PATH");
    char *dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    bool found = false;
    for (char *save, *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *full = xasprintf("%s/%s", *d ? d : ".", prog);
        found = is_executable(full);
        free(full);
    }
    free(dirs);
    return found ? 0 : errf(err, errlen, "%s: not found in PATH or not executable", prog);
}

static int read_hosts(const struct poprun_options *o, struct strvec *hosts, char *err,
                      size_t errlen)
{
    if (o->host && o->hostfile)
        return errf(err, errlen, "--host and --hostfile cannot be used together");
    if (o->host)
        return hostlist_expand(o->host, hosts, err, errlen);
    if (o->hostfile)
        return hostlist_read_file(o->hostfile, hosts, err, errlen);
    return 0;
}

/* Inside a Slurm allocation (slurm.h): the hosts the user named must be its nodes, or, when
 * none were named, the instances go to its nodes. Outside one, HOSTS stays as it is. */
static int slurm_hosts(const struct poprun_options *o, struct slurm_alloc *a, struct strvec *hosts,
                       char *err, size_t errlen)
{
    int in = slurm_alloc_from_env(a, err, errlen);
    if (in <= 0)
        return in;
    if (hosts->n > 0)
        return slurm_alloc_check(a, hosts, o->num_instances, o->host ? "-H" : "--hostfile", err,
                                 errlen);
    return slurm_alloc_pick(a, o->num_instances, hosts, err, errlen);
}

/* A random hex token for this job's status markers. */
static void make_token(char *buf, size_t len)
{
    unsigned char r[8];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        unsigned long x = (unsigned long)getpid() * 2654435761UL ^ (unsigned long)time(NULL);
        memcpy(r, &x, sizeof(r) < sizeof(x) ? sizeof(r) : sizeof(x));
    }
    for (size_t i = 0; i < sizeof(r) && 2 * i + 2 < len; i++)
        snprintf(buf + 2 * i, 3, "%02x", r[i]);
}

/* Everything a job holds, freed by job_free in reverse order. */
struct job {
    struct strvec hosts;
    struct slurm_alloc slurm; /* the allocation poprun runs in, if any (job_id NULL if none) */
    const char *placement;    /* the wrappers' binding (binding.h) */
    char placement_note[512]; /* why there is none, to say once, or "" */
    struct plan_topology topo;
    char *instance_topology;
    struct plan plan;
    struct strvec argv;
    char *cache_path;
    char self[PATH_MAX];
    char token[17];
    struct jobdir dir;      /* what the job keeps in /dev/shm and the temporary directory */
    struct janitor janitor; /* finishes the job if poprun is killed (janitor.h) */
    bool as_root;           /* mpirun may run as root (--allow-run-as-root, or root itself) */
};

static void job_free(struct job *j)
{
    jobdir_close(&j->dir);
    janitor_done(&j->janitor);
    strvec_free(&j->argv);
    free(j->cache_path);
    plan_free(&j->plan);
    free(j->instance_topology);
    plan_topology_free(&j->topo);
    slurm_alloc_free(&j->slurm);
    strvec_free(&j->hosts);
}

/* Whether mpirun is told to run as root: --allow-run-as-root, or (unless it says no) as root. */
static int root_allowed(const struct poprun_options *o, bool *as_root, char *err, size_t errlen)
{
    bool root = geteuid() == 0;
    if (root && o->allow_run_as_root == 0)
        return errf(err, errlen,
                    "refusing to run as root: --allow-run-as-root is off (leave it out, or say "
                    "--allow-run-as-root=yes)");
    *as_root = o->allow_run_as_root > 0 || root;
    return 0;
}

/* --executable-cache-path made absolute (the wrappers create it on every host); an existing
 * file that is not a directory is refused here. */
static int cache_path(const struct poprun_options *o, char **out, char *err, size_t errlen)
{
    const char *p = o->executable_cache_path;
    struct stat st;
    if (!p)
        return 0;
    if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
        return errf(err, errlen, "--executable-cache-path %s is not a directory", p);
    char cwd[PATH_MAX];
    if (p[0] != '/' && !getcwd(cwd, sizeof(cwd)))
        return errf(err, errlen, "--executable-cache-path: cannot find the current directory");
    *out = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", cwd, p);
    return 0;
}

/* Validates and plans the job, and builds the mpirun command. */
static int prepare(const struct poprun_options *o, struct job *j, char *err, size_t errlen)
{
    bool as_root = false;
    if (check_program(o, err, errlen) != 0 || read_hosts(o, &j->hosts, err, errlen) != 0 ||
        slurm_hosts(o, &j->slurm, &j->hosts, err, errlen) < 0 ||
        root_allowed(o, &as_root, err, errlen) != 0 ||
        cache_path(o, &j->cache_path, err, errlen) != 0)
        return -1;
    if (elastic_check(o, err, errlen) != 0)
        return -1;
    if (o->only_output_from_instance >= o->num_instances)
        return errf(err, errlen, "--only-output-from-instance %d is out of range (%d instance%s)",
                    o->only_output_from_instance, o->num_instances,
                    o->num_instances == 1 ? "" : "s");
    struct plan_request req = {o->num_replicas, o->num_instances, o->ipus_per_replica, o->num_ilds,
                               &j->hosts};
    if (topo_resolve(o->topology, o->num_replicas, o->ipus_per_replica, &j->topo,
                     &j->instance_topology, err, errlen) != 0 ||
        plan_build(&req, &j->topo, &j->plan, err, errlen) != 0)
        return -1;
    j->placement =
        placement_choose(o, &j->plan, "/run/netns", j->placement_note, sizeof(j->placement_note));
    ssize_t n = readlink("/proc/self/exe", j->self, sizeof(j->self) - 1);
    if (n <= 0)
        return errf(err, errlen, "cannot find poprun's own path: %s", strerror(errno));
    j->self[n] = '\0';
    make_token(j->token, sizeof(j->token));
    if (jobdir_open(&j->dir, err, errlen) != 0)
        return -1;
    const char *mpirun = getenv("POPRUN_MPIRUN");
    struct mpirun_cmd cmd = {o,           &j->plan,      mpirun && *mpirun ? mpirun : "mpirun",
                             j->self,     j->token,      j->instance_topology,
                             as_root,     j->cache_path, j->dir.id,
                             j->dir.path, j->placement,  j->slurm.job_id != NULL};
    return mpirun_cmd_build(&cmd, &j->argv, err, errlen);
}

/* The allocation's line above the topology table, inside one. */
static void print_slurm(FILE *f, const struct slurm_alloc *a)
{
    if (!a->job_id)
        return;
    char *line = slurm_alloc_describe(a);
    fprintf(f, "%s\n", line);
    free(line);
}

static void print_command(FILE *f, const struct strvec *argv)
{
    char *line = words_join_quoted(argv);
    fprintf(f, "%s\n", line);
    free(line);
}

static void emit_stderr(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    fprintf(stderr, "%.*s\n", (int)len, line);
}

/* One run of mpirun, for the restart loop, and the removal of what it left (jobdir.h). */
static int run_once(void *ctx, struct outcome *out, char *err, size_t errlen)
{
    const struct job *j = ctx;
    int rc = launch_run(&j->argv, j->as_root, j->janitor.fd, out, err, errlen);
    bool ok = rc == 0 && out->mpirun_done && WIFEXITED(out->mpirun_status) &&
              WEXITSTATUS(out->mpirun_status) == 0;
    /* An instance outlives a killed mpirun by up to a few seconds (instance.h). */
    jobdir_wait_idle(&j->dir, JANITOR_IDLE_MS);
    int n = jobdir_sweep(&j->dir, out->mpirun_pid, !ok);
    if (n > 0 && out->verbose >= 1)
        fprintf(stderr, "poprun: removed %d file%s the job left (job %s)\n", n, n == 1 ? "" : "s",
                j->dir.id);
    return rc;
}

/* An elastic job (elastic_job.h) instead of the restart loop, and the same clean-up. */
static int launch_elastic(const struct poprun_options *o, struct job *j)
{
    char err[512];
    int pid = 0;
    struct elastic_job ej = {o,
                             &j->plan,
                             &j->argv,
                             j->as_root,
                             j->janitor.fd,
                             {.token = j->token,
                              .verbose = o->verbose,
                              .emit = emit_stderr,
                              .graceful_timeout_s = o->graceful_timeout}};
    int status = elastic_run(&ej, &pid, err, sizeof err);
    if (status < 0)
        fprintf(stderr, "poprun: %s\n", err);
    jobdir_wait_idle(&j->dir, JANITOR_IDLE_MS);
    jobdir_sweep(&j->dir, pid, status != 0);
    return status < 0 ? 1 : status;
}

static int launch(const struct poprun_options *o, struct job *j)
{
    j->as_root = o->allow_run_as_root > 0 || geteuid() == 0;
    jobdir_make(&j->dir);
    janitor_start(&j->janitor, &j->dir);
    if (o->elastic > 0)
        return launch_elastic(o, j);
    struct restart_job rj = {.max_restarts = o->max_restarts,
                             .plan = &j->plan,
                             .proto = {.token = j->token,
                                       .verbose = o->verbose,
                                       .emit = emit_stderr,
                                       .graceful_timeout_s = o->graceful_timeout},
                             .run = run_once,
                             .ctx = j};
    return restart_loop(&rj);
}

int job_main(const struct poprun_options *o)
{
    struct job j;
    char err[1024];
    memset(&j, 0, sizeof(j));
    j.janitor.fd = -1;
    int status = 0;
    if (prepare(o, &j, err, sizeof(err)) != 0 ||
        (o->export_config && options_export_config(o, o->export_config, err, sizeof(err)) != 0)) {
        fprintf(stderr, "poprun: %s\n", err);
        status = POPRUN_EXIT_USAGE;
        goto out_free;
    }
    options_report_no_effect(o, stderr);
    if (j.placement_note[0])
        fprintf(stderr, "%s\n", j.placement_note);
    if (o->dry_run) {
        print_slurm(stdout, &j.slurm);
        print_topology(stdout, &j.plan, &j.topo);
        printf("mpirun command:\n");
        print_command(stdout, &j.argv);
        goto out_free;
    }
    if (o->print_topology) {
        print_slurm(stdout, &j.slurm);
        print_topology(stdout, &j.plan, &j.topo);
    }
    if (o->verbose >= 1) {
        if (!o->print_topology) {
            print_slurm(stderr, &j.slurm);
            print_topology(stderr, &j.plan, &j.topo);
        }
        fprintf(stderr, "poprun: running: ");
        print_command(stderr, &j.argv);
    }
    status = launch(o, &j);
out_free:
    job_free(&j);
    return status;
}
