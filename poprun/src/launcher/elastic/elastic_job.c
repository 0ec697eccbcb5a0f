/*
 * An elastic job; see elastic_job.h.
 */
#include "launcher/elastic/elastic_job.h"

#include <arpa/inet.h>
#include <gcl/elastic_store.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/hidden.h"
#include "launcher/elastic/elastic_server.h"
#include "launcher/launch.h"
#include "launcher/restart.h"

/* How long a silent instance is given (no beat), and a member that does not come to a resize. */
#define BEAT_TIMEOUT_S   4.0
#define RESIZE_TIMEOUT_S 30.0
/* How long replacements still running are waited for once mpirun ended. */
#define JOINER_WAIT_S 10.0

int elastic_check(const struct poprun_options *o, char *err, size_t errlen)
{
    if (o->elastic > 0 && o->min_replicas == 0)
        return errf(err, errlen,
                    "--elastic needs --min-replicas M: the fewest replicas the job may go on with "
                    "(1 to --num-replicas %d)",
                    o->num_replicas);
    if (o->elastic <= 0 && o->min_replicas > 0)
        return errf(err, errlen, "--min-replicas %d is only for an elastic job: add --elastic",
                    o->min_replicas);
    if (o->elastic > 0 && o->min_replicas > o->num_replicas)
        return errf(err, errlen,
                    "--min-replicas %d is more than the job's --num-replicas %d (1 to %d are "
                    "accepted)",
                    o->min_replicas, o->num_replicas, o->num_replicas);
    return 0;
}

/* This host's address toward HOST, as its kernel would route a datagram there; 0 when none. */
static int address_toward(const char *host, char *out, size_t len)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (getaddrinfo(host, "9", &hints, &res) != 0 || !res)
        return 0;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok = 0;
    struct sockaddr_in me;
    socklen_t n = sizeof me;
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &n) == 0 &&
        inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)len))
        ok = (ntohl(me.sin_addr.s_addr) >> 24) != 127;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return ok;
}

/* Where the store listens: the loopback for a job on this host, else this host's address
 * toward the first of the job's hosts that is reached through a network. */
static void store_address(const struct plan *p, char *out, size_t len)
{
    snprintf(out, len, "127.0.0.1");
    for (int h = 0; !p->local && h < p->hosts.n; h++)
        if (address_toward(p->hosts.v[h], out, len))
            return;
    snprintf(out, len, "127.0.0.1");
}

/* The mpirun command of one replacement: the job's, with one rank ("-np 1"), mpirun's --host
 * (when the job names hosts) at *HOST_AT, and "--_elastic-slot SLOT" after the wrapper's token
 * (the slot at *SLOT_AT). */
static void joiner_argv(const struct strvec *job, struct strvec *out, int *slot_at, int *host_at)
{
    bool np = false, host = false;
    *slot_at = *host_at = -1;
    for (int i = 0; i < job->n; i++) {
        const char *w = job->v[i], *prev = i ? job->v[i - 1] : "";
        if (!np && !strcmp(prev, "-np")) {
            strvec_push(out, "1");
            np = true;
            continue;
        }
        if (!host && !strcmp(prev, "--host") && *slot_at < 0) {
            *host_at = out->n;
            host = true;
        }
        strvec_push(out, w);
        if (i >= 1 && !strcmp(prev, POPRUN_OPT_INSTANCE) && *slot_at < 0) {
            strvec_push(out, "--_elastic-slot");
            *slot_at = out->n;
            strvec_push(out, "0");
        }
    }
}

/* The launcher's view of the instances' status markers. */
struct watch {
    const struct plan *plan;
    struct elastic_server *server;
    struct marker *markers; /* [num_instances]; instance -1: none */
};

static void on_marker(void *ctx, const struct marker *m)
{
    struct watch *w = ctx;
    if (m->instance < 0 || m->instance >= w->plan->num_instances)
        return;
    /* A stop from outside (the instance still runs: scancel, a signal to every process) or a
     * program that ended as its job stopped: the job stops, and no instance is lost. */
    if (m->kind == MARKER_STOP || m->kind == MARKER_STOPPED) {
        elastic_server_hold(w->server);
        return;
    }
    w->markers[m->instance] = *m;
    char why[120];
    if (m->kind == MARKER_SIGNAL)
        snprintf(why, sizeof why, "it was killed by signal %d (%s)", m->value, strsignal(m->value));
    else
        snprintf(why, sizeof why, "it exited with status %d", m->value);
    elastic_server_lost(w->server, m->instance, why);
}

/* The job's stop begins: nobody is replaced any more. */
static void job_stops(void *ctx)
{
    const struct watch *w = ctx;
    elastic_server_hold(w->server);
}

static bool job_complete(void *ctx)
{
    const struct watch *w = ctx;
    return elastic_server_complete(w->server);
}

static void make_token(uint8_t token[16], char *hex)
{
    if (getrandom(token, 16, 0) != 16) {
        unsigned long long x = (unsigned long long)getpid() ^ (unsigned long long)time(NULL);
        for (int i = 0; i < 16; i++)
            token[i] = (uint8_t)(x >> (8 * (i % 8)) ^ (unsigned)i * 131u);
    }
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", token[i]);
}

/* The job's status from what the store saw, what mpirun did and the markers. */
static int final_status(const struct elastic_job *ej, const struct outcome *out,
                        const struct watch *w, int replacement_failure)
{
    const struct emembers *em = elastic_server_members(w->server);
    char msg[1024], why[GCL_STORE_TEXT_MAX];
    if (out->interrupt_sig || !em_completed(em)) {
        if (!out->interrupt_sig && em_stopped(em, why, sizeof why)) {
            /* As a job without --elastic stops: the first failure's status and line. */
            int code = outcome_exit_status(out, ej->plan, msg, sizeof msg);
            fprintf(stderr, "poprun: the elastic job stopped: %s%s%s\n", why, msg[0] ? "; " : "",
                    msg);
            return code ? code : 1;
        }
        int code = outcome_exit_status(out, ej->plan, msg, sizeof msg);
        if (msg[0])
            fprintf(stderr, "poprun: %s\n", msg);
        return code ? code : out->interrupt_sig ? 0 : 1;
    }
    /* Complete: an instance of the last membership that failed still fails the job. */
    for (int i = 0; i < ej->plan->num_instances; i++) {
        const struct marker *m = &w->markers[i];
        if (m->instance < 0 || em_slot_lost(em, i, NULL, 0))
            continue;
        int code = m->kind == MARKER_SIGNAL ? 128 + m->value : m->value;
        fprintf(stderr, "poprun: instance %d (host %s) %s %d after the job finished\n", i,
                ej->plan->hosts.v[ej->plan->inst[i].host],
                m->kind == MARKER_SIGNAL ? "was killed by signal" : "exited with status", m->value);
        return code;
    }
    /* A replacement's own end is the membership's story (it was lost, or came too late), told
     * as it happened; with -v, its status too. */
    if (replacement_failure && ej->o->verbose >= 1)
        fprintf(stderr, "poprun: elastic: a replacement ended with status %d\n",
                replacement_failure);
    return 0;
}

/* The job's mpirun ended, its instances all lost (and replaced), and the job goes on in
 * replacements, each of a mpirun of its own: poprun serves them until the job completes or
 * stops, or none runs. SIGINT, SIGTERM or SIGHUP (still blocked: launch.h) ends them, as it
 * would end mpirun's. */
static void outlive_mpirun(struct elastic_server *s, struct outcome *out, int verbose)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    struct timespec tick = {0, 100 * 1000 * 1000};
    bool said = false;
    while (elastic_server_carried(s)) {
        if (!said && verbose >= 1)
            fprintf(stderr,
                    "poprun: elastic: the job's mpirun ended; replacements carry the job on\n");
        said = true;
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig > 0) {
            out->interrupt_sig = sig;
            out->signaled = true;
            return;
        }
    }
}

static void setup_env(const char *addr, const char *hex, int min_replicas)
{
    char m[16];
    snprintf(m, sizeof m, "%d", min_replicas);
    setenv(GCL_ELASTIC_ENV_STORE, addr, 1);
    setenv(GCL_ELASTIC_ENV_TOKEN, hex, 1);
    setenv(GCL_ELASTIC_ENV_MIN_REPLICAS, m, 1);
}

int elastic_run(const struct elastic_job *ej, int *mpirun_pid, char *err, size_t errlen)
{
    const struct plan *p = ej->plan;
    char bind[64], addr[96], hex[33];
    struct strvec jargv = STRVEC_INIT;
    struct elastic_server_cfg cfg = {.members = {p->num_instances,
                                                 p->num_replicas / p->num_instances,
                                                 ej->o->min_replicas,
                                                 BEAT_TIMEOUT_S,
                                                 RESIZE_TIMEOUT_S,
                                                 {0}},
                                     .bind_addr = bind,
                                     .max_replacements = ej->o->max_restarts,
                                     .joiner_argv = &jargv,
                                     .hosts = &p->hosts,
                                     .instances_per_host = p->instances_per_host,
                                     .token = ej->proto.token,
                                     .verbose = ej->o->verbose};
    store_address(p, bind, sizeof bind);
    make_token(cfg.members.token, hex);
    joiner_argv(ej->argv, &jargv, &cfg.slot_at, &cfg.host_at);
    struct watch w = {p, NULL, xcalloc((size_t)p->num_instances, sizeof *w.markers)};
    for (int i = 0; i < p->num_instances; i++)
        w.markers[i].instance = -1;
    if (elastic_server_start(&cfg, &w.server, addr, sizeof addr, err, errlen) != 0) {
        strvec_free(&jargv);
        free(w.markers);
        return -1;
    }
    setup_env(addr, hex, ej->o->min_replicas);
    if (ej->o->max_restarts > 0) /* a replacement may start while its host is cut off */
        restart_daemon_retries();
    if (ej->o->verbose >= 1)
        fprintf(stderr, "poprun: elastic: the store listens on %s\n", addr);
    struct outcome out = ej->proto;
    out.elastic = true;
    out.on_marker = on_marker;
    out.on_stop = job_stops;
    out.complete = job_complete;
    out.marker_ctx = &w;
    int rc = launch_run(ej->argv, ej->as_root, ej->janitor_fd, &out, err, errlen);
    *mpirun_pid = out.mpirun_pid;
    if (rc == 0 && !out.interrupt_sig)
        outlive_mpirun(w.server, &out, ej->o->verbose);
    elastic_server_stop(w.server, rc == 0 && !out.interrupt_sig ? JOINER_WAIT_S : 0);
    int failure = 0;
    elastic_server_replacements(w.server, &failure);
    int status = rc == 0 ? final_status(ej, &out, &w, failure) : -1;
    elastic_server_free(w.server);
    strvec_free(&jargv);
    free(w.markers);
    return status;
}
