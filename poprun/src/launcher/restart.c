/*
 * The restart loop; see restart.h.
 */
#include "launcher/restart.h"

#include <gcl/popdist_env.h>
#include <stdio.h>
#include <stdlib.h>

bool restart_wanted(const struct outcome *out, int status)
{
    if (status == 0 || out->interrupt_sig)
        return false;
    /* An instance's usage error (status 2) would only come again, also when another instance
     * that failed because of it was reported first. */
    bool usage = out->usage_error ||
                 (out->have_failure && out->failure.kind == MARKER_EXIT && out->failure.value == 2);
    return out->host_lost || !usage;
}

/* A restart may begin while the host that was lost is still cut off (a link that flaps): its
 * daemon, started there, cannot reach mpirun, gives up after OpenMPI's 2 quick tries, and
 * mpirun waits forever for a daemon that never calls back (scripts/chaos: a link down 6.3 s,
 * the restart 4 s into it, mpirun still waiting 240 s later). With 60 tries 1 s apart the
 * daemon calls back once the link is up again. Set for mpirun and its daemons through the
 * environment, unless the user set them. */
void restart_daemon_retries(void)
{
    setenv("OMPI_MCA_oob_tcp_peer_retries", "60", 0);
    setenv("OMPI_MCA_oob_tcp_retry_delay", "1", 0);
}

int restart_loop(const struct restart_job *rj)
{
    char err[512], msg[512];
    if (rj->max_restarts > 0)
        restart_daemon_retries();
    for (int attempt = 0;; attempt++) {
        if (rj->max_restarts > 0) {
            char count[16];
            snprintf(count, sizeof(count), "%d", attempt);
            setenv(POPDIST_ENV_RESTART_COUNT, count, 1);
        }
        struct outcome out = rj->proto;
        fflush(stdout);
        fflush(stderr);
        if (rj->run(rj->ctx, &out, err, sizeof(err)) != 0) {
            fprintf(stderr, "poprun: %s\n", err);
            return 1;
        }
        int status = outcome_exit_status(&out, rj->plan, msg, sizeof(msg));
        bool again = restart_wanted(&out, status);
        if (again && attempt < rj->max_restarts) {
            fprintf(stderr, "poprun: %s; restarting the job (restart %d of %d)\n", msg, attempt + 1,
                    rj->max_restarts);
            continue;
        }
        if (msg[0] && again && rj->max_restarts > 0)
            fprintf(stderr, "poprun: %s; no restart left (%d used)\n", msg, rj->max_restarts);
        else if (msg[0] && rj->max_restarts > 0 && out.usage_error &&
                 !(out.have_failure && out.failure.instance == out.usage_instance))
            fprintf(stderr, "poprun: %s; not restarted: instance %d exited with status 2\n", msg,
                    out.usage_instance);
        else if (msg[0])
            fprintf(stderr, "poprun: %s\n", msg);
        return status;
    }
}
