/*
 * The status line an instance wrapper writes on its stderr when its program fails, and poprun
 * recognises (and removes) in mpirun's stderr:
 *
 *   @@poprun-status TOKEN INSTANCE exit CODE
 *   @@poprun-status TOKEN INSTANCE signal SIGNO
 *
 * and, for a stop that did not come from poprun (a preemption of the job, instance.h):
 *
 *   @@poprun-status TOKEN INSTANCE stop SIGNO      the wrapper got SIGNO from outside poprun's
 *                                                   chain (Slurm: scancel, sbatch --signal)
 *   @@poprun-status TOKEN INSTANCE stopped SIGNO   its program stopped by itself as after SIGNO
 *                                                   (exit 128+SIGNO: a peer's stop, agreed)
 *
 * TOKEN is a random per-job hex string that poprun passes to the wrappers, so that a program's
 * own output cannot be mistaken for a report. The line is plain ASCII, short (one atomic write),
 * and travels through mpirun's I/O forwarding from any host. poprun finds it anywhere in a line,
 * in case another instance's unterminated output was glued in front of it.
 */
#ifndef POPRUN_MARKER_H
#define POPRUN_MARKER_H

#include <stdbool.h>
#include <stddef.h>

#define MARKER_PREFIX "@@poprun-status "

/* A line of the program's stdout, which the wrapper carries on its stderr (a pipe, where it can
 * keep mpirun's reads to whole lines; its stdout is mpirun's pseudo-terminal):
 *
 *   @@poprun-out TOKEN [instance N] the program's line
 *
 * poprun writes what follows "TOKEN " on its own stdout. */
#define MARKER_OUT_PREFIX "@@poprun-out "

enum marker_kind { MARKER_EXIT, MARKER_SIGNAL, MARKER_STOP, MARKER_STOPPED };

struct marker {
    int instance;
    enum marker_kind kind;
    int value; /* exit status or signal number (of the signal, for STOP and STOPPED) */
};

/* Formats the marker line, newline included, into BUF. Returns its length. */
size_t marker_format(char *buf, size_t len, const char *token, const struct marker *m);

/* The prefix of a stdout line of TOKEN's job, into BUF. Returns its length. */
size_t marker_out_prefix(char *buf, size_t len, const char *token);

/* Whether LINE (LEN bytes) holds a stdout line of TOKEN's job: *START is where the marker begins
 * (what stands before it is mpirun's own tag, from --tag-output or --timestamp-output), *AT where
 * the program's line begins. */
bool marker_out_find(const char *line, size_t len, const char *token, size_t *start, size_t *at);

/* Looks for a marker of TOKEN in LINE (LEN bytes, no newline). When found, fills M and sets
 * *START and *END to the byte range it occupies, and returns true. */
bool marker_find(const char *line, size_t len, const char *token, struct marker *m, size_t *start,
                 size_t *end);

#endif /* POPRUN_MARKER_H */
