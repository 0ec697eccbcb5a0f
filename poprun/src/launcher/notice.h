/*
 * mpirun's notices: the blocks, framed by lines of dashes, that OpenMPI's mpirun writes on its
 * stderr when a job fails. poprun reads two of them (OpenMPI 4.1's help-orterun.txt and
 * help-errmgr-base.txt; the first word is the launcher's name, "mpirun", "mpiexec", ...):
 *
 *   mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).
 *
 * says that a rank, which under poprun is an instance wrapper, died of a signal. No status marker
 * tells of that: a wrapper killed with SIGKILL writes nothing, and its program dies with it (see
 * instance.h). mpirun prints it only for the first rank whose end aborted the job.
 *
 *   Primary job  terminated normally, but 1 process returned
 *   a non-zero exit code. Per user-direction, the job has been aborted.
 *
 * comes before mpirun's notice that names the rank, and only restates it.
 *
 *   ORTE has lost communication with a remote daemon.
 *
 *     HNP daemon   : [[49584,0],0] on node h0
 *     Remote daemon: [[49584,0],2] on node h2
 *
 * says that a host is lost (its daemon died or the network to it failed): the instances there
 * end without a word, and the others' failures that follow are its consequences.
 *
 * The notice is trusted because it starts a line: every line of a program's output reaches
 * mpirun through its wrapper, which prefixes "[instance N] ".
 */
#ifndef POPRUN_NOTICE_H
#define POPRUN_NOTICE_H

#include <stdbool.h>
#include <stddef.h>

/* Room for a node's name, NUL included; longer names are cut. */
#define NOTICE_NODE_MAX 64

/* A rank that died of a signal, from mpirun's notice. */
struct notice_death {
    int rank;
    int signo;
    char node[NOTICE_NODE_MAX]; /* mpirun's name of the node */
};

/* Whether LINE (LEN bytes, no newline) is one of the lines of dashes that frame a notice. */
bool notice_is_frame(const char *line, size_t len);

/* Parses "LAUNCHER noticed that process rank R with PID P on node H exited on signal S", with
 * or without " (NAME)." after S, at the start of LINE. Fills D and returns true, or returns
 * false when LINE is anything else. */
bool notice_parse_death(const char *line, size_t len, struct notice_death *d);

/* Whether LINE opens mpirun's "WHO job ... terminated normally, but N processes returned"
 * notice, which restates a failure that its next notice names. */
bool notice_is_restatement(const char *line, size_t len);

/* Whether LINE opens mpirun's notice that it could not start its daemons (on a host ssh could
 * not reach, say): "ORTE was unable to reliably start one or more daemons." */
bool notice_is_start_failure(const char *line, size_t len);

/* Whether LINE opens mpirun's notice that it lost a remote daemon. */
bool notice_is_lost_daemon(const char *line, size_t len);

/* Parses "  Remote daemon: [[J,0],D] on node H" (leading spaces optional) into NODE (cut to
 * NOTICE_NODE_MAX). Returns false for anything else. */
bool notice_parse_lost_node(const char *line, size_t len, char node[NOTICE_NODE_MAX]);

#endif /* POPRUN_NOTICE_H */
