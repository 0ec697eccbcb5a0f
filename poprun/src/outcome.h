/*
 * What poprun makes of mpirun's stderr and exit: the status markers of failed instances are
 * removed from the stream and remembered, mpirun's own notices that restate a known failure are
 * dropped (kept with -v), and the result becomes one line and poprun's exit status.
 */
#ifndef POPRUN_OUTCOME_H
#define POPRUN_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

#include "linebuf.h"
#include "marker.h"
#include "plan.h"

struct outcome {
    /* Inputs of the filter. */
    const char *token;
    int verbose;
    linebuf_fn emit; /* where the lines that pass go */
    void *emit_ctx;
    /* What was seen. */
    bool have_failure;
    struct marker failure; /* the first instance that failed on its own */
    int interrupt_sig;     /* the first SIGINT/SIGTERM/SIGHUP poprun received, or 0 */
    bool mpirun_done;
    int mpirun_status; /* wait status of mpirun */
    /* Filter state. */
    bool in_notice;
};

/* A linebuf_fn for mpirun's stderr, with CTX an outcome: takes status markers out of the lines,
 * and once the job is known to be failing or interrupted, drops mpirun's notices (the blocks
 * between its lines of dashes) unless verbose. Passes every other line to emit. */
void outcome_filter_line(void *ctx, const char *line, size_t len);

/* The exit status of poprun, with the line that explains it in MSG ("" on success):
 *   "instance 2 (host h1) exited with status 3"            -> 3
 *   "instance 2 (host h1) was killed by signal 9 (SIGKILL)" -> 137
 *   "interrupted by SIGINT; every instance was ended"      -> 130
 *   "mpirun exited with status 1"                          -> 1 (mpirun's own failures)
 * An instance's failure wins over the interrupt and mpirun's status. */
int outcome_exit_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen);

#endif /* POPRUN_OUTCOME_H */
