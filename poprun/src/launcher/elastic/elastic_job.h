/*
 * An elastic job (poprun --elastic --min-replicas M): poprun serves the store its instances
 * bootstrap through (elastic_server.h), runs mpirun with --enable-recovery so that a lost
 * instance does not end the others, starts replacements of lost instances (--max-restarts N),
 * and ends with the job's status:
 *   0                   every instance of the last membership finished (lost instances are
 *                       reported, each on its line, as they go and come back)
 *   the first failure's the job stopped, as a job without --elastic stops: fewer than M replicas
 *   status, or 1        left ("... instances 1, 2 lost"), or the instances failed for a cause a
 *                       resize does not mend; the line names why, and the first failure
 *   128+N, or another   as without --elastic: an interrupt, an instance of the last membership
 *                       that failed, mpirun's own failure
 */
#ifndef POPRUN_ELASTIC_JOB_H
#define POPRUN_ELASTIC_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "launcher/outcome.h"
#include "plan/plan.h"
#include "cli/settings.h"
#include "common/util.h"

struct elastic_job {
    const struct poprun_options *o;
    const struct plan *plan;
    const struct strvec *argv; /* the job's mpirun command */
    bool as_root;
    int janitor_fd;       /* told mpirun's pid (janitor.h), or -1 */
    struct outcome proto; /* token, verbose, emit, graceful timeout */
};

/* Checks the elastic options: --elastic needs --min-replicas, which must not exceed the job's
 * replicas; --min-replicas needs --elastic. Returns 0, or -1 with one line in ERR. */
int elastic_check(const struct poprun_options *o, char *err, size_t errlen);

/* Runs the job; returns poprun's exit status (the line that explains it printed), or -1 with a
 * line in ERR when it could not start at all. *MPIRUN_PID gets mpirun's pid (for the clean-up
 * of what the job left). */
int elastic_run(const struct elastic_job *ej, int *mpirun_pid, char *err, size_t errlen);

#endif /* POPRUN_ELASTIC_JOB_H */
