/*
 * What poprun makes of mpirun's stderr and exit: the status markers of failed instances are
 * removed from the stream and remembered, mpirun's notice that an instance wrapper died of a
 * signal is read (see notice.h), mpirun's own notices that restate a known failure are dropped
 * (kept with -v), and the result becomes one line and poprun's exit status.
 */
#ifndef POPRUN_OUTCOME_H
#define POPRUN_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

#include "common/linebuf.h"
#include "common/marker.h"
#include "launcher/notice.h"
#include "plan/plan.h"

/* Where the filter is in mpirun's notices. */
enum outcome_notice {
    OUTCOME_OUT,  /* between notices */
    OUTCOME_HEAD, /* a notice opened: its frame is held until its first line decides */
    OUTCOME_SHOW, /* in a notice that passes */
    OUTCOME_DROP, /* in a notice that restates a known failure */
    OUTCOME_HOLD, /* in a restatement whose failure is not known yet: held */
};

/* Room for held notice lines; more is passed on. */
#define OUTCOME_HELD_MAX 4096
/* Instances whose status markers are told apart (an instance past it counts as silent). */
#define OUTCOME_INSTANCES_MAX 8192

struct outcome {
    /* Inputs of the filter. */
    const char *token;
    int verbose;
    linebuf_fn emit; /* where the lines that pass go */
    void *emit_ctx;
    linebuf_fn emit_out;    /* where the programs' stdout lines go (marker.h); NULL: fd 1 */
    int graceful_timeout_s; /* --graceful-timeout: 0 ends the instances at once on a signal */
    /* poprun --elastic: an instance's failure does not end the job (mpirun --enable-recovery
     * goes on without it), and each status marker also goes to ON_MARKER as it came (a stop
     * marker too: the instance still runs, or ended as its job stops); ON_STOP is called when
     * the job's stop begins (poprun's signal, or an instance's stop marker). */
    bool elastic;
    void (*on_marker)(void *ctx, const struct marker *m);
    void (*on_stop)(void *ctx);
    void *marker_ctx;
    /* Whether the elastic job is complete (every instance of its last membership finished):
     * mpirun is then given FAILURE_GRACE_MS to end (it may wait for a lost host's daemon). */
    bool (*complete)(void *ctx);
    /* What was seen. */
    bool have_failure;
    struct marker failure; /* the first instance that failed: its program, or its wrapper */
    bool usage_error;      /* some instance exited with status 2, first or not: */
    int usage_instance;    /* the first such */
    /* The failure is mpirun's notice that the instance's wrapper died of a signal (so its program
     * too); WRAPPER_NODE is mpirun's name of its node. */
    bool wrapper_died;
    char wrapper_node[NOTICE_NODE_MAX];
    /* mpirun lost its daemon on host LOST_NODE (mpirun's name): that host is lost. */
    bool host_lost;
    char lost_node[NOTICE_NODE_MAX];
    int interrupt_sig; /* the first SIGINT/SIGTERM/SIGHUP poprun received, or 0 */
    bool signaled;     /* poprun itself received it (not only an instance's stop marker) */
    /* A stop that did not come from poprun (marker.h): STOP_SIG, the first instance that got it
     * from outside (STOP_OUTSIDE) or whose program stopped by itself; poprun then stops the
     * job as if it had received STOP_SIG. */
    int stop_sig;
    int stop_instance;
    bool stop_outside;
    bool graceful_expired; /* instances were still running after --graceful-timeout */
    bool mpirun_done;
    int mpirun_status; /* wait status of mpirun */
    int mpirun_pid;    /* its process, whose own crash report is dropped after OVERDUE_S */
    /* mpirun had not ended the job OVERDUE_S seconds after a failure and poprun killed it (0:
     * no): instances whose marker never came ran where mpirun's daemon could not be reached. */
    int overdue_s;
    unsigned char reported[OUTCOME_INSTANCES_MAX / 8]; /* instances whose marker came */
    /* mpirun could not start its daemons (ssh could not reach a host); START_REASON is the last
     * line mpirun's launcher (ssh) wrote before mpirun said so. */
    bool start_failed;
    char start_reason[512];
    /* Filter state. */
    enum outcome_notice notice;
    bool opened;                 /* the last line opened a notice */
    char held[OUTCOME_HELD_MAX]; /* lines kept back, each ended by '\n' */
    size_t held_len;
    /* Until an instance speaks, lines of mpirun's stderr outside its notices (ssh's, before a
     * daemon failed to start) are kept back: they are the reason of a start failure, said in
     * one line, or are passed on when an instance's first line (or the end) comes. */
    bool launched;
    char early[OUTCOME_HELD_MAX];
    size_t early_len;
};

/* A linebuf_fn for mpirun's stderr, with CTX an outcome: takes status markers out of the lines,
 * reads mpirun's notice of a wrapper's death by a signal, and once the job is known to be failing
 * or interrupted, drops mpirun's notices (the blocks between its lines of dashes) unless verbose.
 * mpirun's "job terminated normally, but ..." notice, which comes before the one naming the rank,
 * is held back until mpirun's next notice (or the end) tells whether it restates a known failure;
 * the instances' lines that come meanwhile pass it. Passes every other line to emit, in order. A
 * wrapper's death wins over a marker seen before it: mpirun names the first rank to end, and the
 * program of another instance that failed meanwhile most likely failed because its peer had died.
 * It does not count once poprun was interrupted. For the same reason a program's death by a
 * signal wins over an exit status seen before it (the first such death counts): across hosts,
 * the survivors of a kill -9 may fail, exit and be reported through their own host's daemon
 * before the victim's wrapper is through the other's. */
void outcome_filter_line(void *ctx, const char *line, size_t len);
/* (A program's stdout line, MARKER_OUT_PREFIX, goes to emit_out at once, whatever the state.) */

/* At the end of mpirun's stderr: passes on held lines, unless they restate a known failure. */
void outcome_filter_finish(struct outcome *o);

/* The exit status of poprun, with the line that explains it in MSG ("" on success):
 *   "instance 2 (host h1) exited with status 3"            -> 3
 *   "instance 2 (host h1) was killed by signal 9 (SIGKILL)" -> 137
 *   "instance 2 (host h1) was killed by signal 9 (SIGKILL): its poprun wrapper died, and its
 *    program with it"                                      -> 137
 *   "interrupted by SIGINT; every instance was ended"      -> 130
 *   "interrupted by SIGTERM; instances still running after --graceful-timeout 30 s were
 *    killed"                                               -> 143
 *   "interrupted by SIGTERM, which instance 2 (host h2) got from outside poprun; every
 *    instance was ended"                                   -> 143 (Slurm's scancel, --signal)
 *   "interrupted: instance 0 (host h1) stopped as SIGTERM stops (exit 143); every instance
 *    was ended"                                            -> 143 (a program's own stop)
 *   "host h2 is lost: mpirun lost contact with its daemon (instance 1 ran there)"
 *                                                          -> 1, or mpirun's non-zero status
 *   "cannot start instances on host 'h2': ssh: connect to host h2 port 22: Connection refused"
 *                                                          -> 1 (mpirun could not start its
 *                                                               daemon there; its notice is
 *                                                               dropped unless verbose)
 *   "mpirun exited with status 1"                          -> 1 (mpirun's own failures)
 * After an overdue failure (overdue_s) the line goes on with the instances never heard from:
 *   "...; mpirun did not end the job within 10 s: host h2 is unreachable (instances 2, 3 there
 *    never reported)"
 * A lost host wins over the instances' failures (which follow from it); an instance's failure
 * wins over the interrupt and mpirun's status. */
int outcome_exit_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen);

#endif /* POPRUN_OUTCOME_H */
