/*
 * Automatic restarts (--max-restarts N): the whole job runs again after a failure, up to N
 * times, as torchrun's --max-restarts does. Every instance of run k (0 the first time) gets
 * POPDIST_RESTART_COUNT=k (mpirun passes it on with -x, to every host), so that a program can
 * resume from its newest checkpoint (train does so by itself).
 *
 * A run is restarted when an instance failed (exited non-zero, was killed) or mpirun failed
 * (e.g. it lost a host's daemon), but not when poprun was interrupted (SIGTERM, SIGINT: the
 * user or the scheduler wants the job to stop) and not when an instance exited with status 2
 * (a usage error, or a program that knows a restart would only repeat its failure, such as
 * train finding no valid checkpoint to resume), whether or not it was the first to fail. Each
 * restart is one line on stderr:
 *
 *   poprun: instance 1 (host h1) was killed by signal 9 (SIGKILL); restarting the job (restart 1 of
 * 2)
 *
 * and the last failure, when no restart is left, its usual line with "; no restart left (2
 * used)" added.
 */
#ifndef POPRUN_RESTART_H
#define POPRUN_RESTART_H

#include <stdbool.h>

#include "launcher/outcome.h"
#include "plan/plan.h"

/* What a run needs: RUN starts mpirun once and fills OUT (whose inputs the loop sets). */
struct restart_job {
    int max_restarts;
    const struct plan *plan;
    struct outcome proto; /* the inputs of every run's outcome: token, verbose, emit, ... */
    int (*run)(void *ctx, struct outcome *out, char *err, size_t errlen);
    void *ctx;
};

/* Whether a run that ended as OUT says, with exit STATUS, is worth running again. */
bool restart_wanted(const struct outcome *out, int status);

/* Runs the job until it succeeds, stops for a reason that a restart does not mend, or has used
 * its restarts; prints the restart lines and the final one. Returns poprun's exit status (1 when
 * mpirun could not be started). */
int restart_loop(const struct restart_job *rj);

/* OpenMPI's daemons try 60 times, 1 s apart, to reach mpirun (unless the user set it): a
 * restart, or an elastic job's replacement, started while the lost host's link is still down
 * goes on once it is up. Sets the environment mpirun and its daemons read. */
void restart_daemon_retries(void);

#endif /* POPRUN_RESTART_H */
