/*
 * The replacement of a lost instance (poprun --elastic --max-restarts N): one more mpirun of one
 * rank, for that instance's slot on its planned host, whose wrapper (--_elastic-slot SLOT) gives
 * the program the lost instance's POPDIST_* variables and GCL_ELASTIC_JOIN=1. The program's
 * gcl_init joins the job through the store at its next step boundary. Its mpirun's stderr goes
 * through the same filter as the job's (status markers out, program lines to stdout).
 */
#ifndef POPRUN_ELASTIC_GROW_H
#define POPRUN_ELASTIC_GROW_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/linebuf.h"
#include "launcher/outcome.h"
#include "common/util.h"

struct egrow_child {
    pid_t pid; /* 0 once reaped */
    int slot;
    int err_fd; /* mpirun's stderr, -1 once closed */
    struct linebuf lb;
    struct outcome out;
    int status; /* wait status, once reaped */
    /* The server's bookkeeping (elastic_server.c): the slot's losses when it started, when it
     * started, since when it is stale (its instance was lost, or never joined: 0 while not),
     * and the signals sent to end it. */
    int losses;
    double started, stale_at;
    int kills;
};

/* Starts the replacement of SLOT: ARGV with the slot's number at argv[SLOT_AT] and, when HOST is
 * not NULL, "HOST:1" at argv[HOST_AT]. Returns 0, or -1 with a line in ERR. */
int egrow_spawn(const struct strvec *argv, int slot_at, int host_at, int slot, const char *host,
                const char *token, int verbose, struct egrow_child *c, char *err, size_t errlen);
/* Reads what mpirun wrote on its stderr (after poll said so). */
void egrow_read(struct egrow_child *c);
/* Whether it has ended (reaped now or before). */
bool egrow_reap(struct egrow_child *c);
/* Signals its process group. */
void egrow_kill(struct egrow_child *c, int sig);
/* Its exit status as poprun would report it (0: clean), and frees what it holds. */
int egrow_finish(struct egrow_child *c);

#endif /* POPRUN_ELASTIC_GROW_H */
