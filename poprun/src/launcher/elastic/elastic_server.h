/*
 * poprun's elastic store on the network: a thread of the launcher process that listens on one
 * TCP port, reads the instances' messages (gcl/elastic_store.h) into the membership state
 * machine (elastic_members.h) and writes its answers, and runs the replacements of lost
 * instances (elastic_grow.h) with their output. The launcher's own thread talks to it only
 * through elastic_server_lost (an instance's status marker) and elastic_server_stop.
 */
#ifndef POPRUN_ELASTIC_SERVER_H
#define POPRUN_ELASTIC_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "launcher/elastic/elastic_members.h"
#include "common/util.h"

struct elastic_server;

struct elastic_server_cfg {
    struct emembers_cfg members;
    const char *bind_addr; /* IPv4 address to listen on */
    /* Replacements (--max-restarts): how many, and the mpirun command of one (its words; the
     * slot is inserted at SLOT_AT, the host at HOST_AT (-1: none)), and the marker token. */
    int max_replacements;
    const struct strvec *joiner_argv;
    int slot_at, host_at;
    const struct strvec *hosts; /* the plan's hosts; instance k runs on hosts[k / per_host] */
    int instances_per_host;
    const char *token;
    int verbose;
};

/* Listens and starts the thread. *ADDR gets "IPV4:PORT" for GCL_ELASTIC_STORE. Returns 0, or -1
 * with a line in ERR. */
int elastic_server_start(const struct elastic_server_cfg *cfg, struct elastic_server **out,
                         char *addr, size_t addrlen, char *err, size_t errlen);
/* The instance of SLOT ended (its wrapper's status marker): WHY. Any thread. */
void elastic_server_lost(struct elastic_server *s, int slot, const char *why);
/* The job stops (poprun was interrupted, or an instance was stopped from outside): from now on
 * no lost instance is replaced; one already started is ended by the stop. */
void elastic_server_hold(struct elastic_server *s);
/* Waits up to WAIT_S for the replacements still running to end (then ends them), stops the
 * thread and closes every connection. The state stays readable. */
void elastic_server_stop(struct elastic_server *s, double wait_s);
/* Whether the job is complete (every instance of its last membership said BYE). Any thread. */
bool elastic_server_complete(struct elastic_server *s);
/* Whether the job goes on (neither complete nor stopped) with replacements running that hold
 * their slots: it can outlive the job's own mpirun, once every instance that mpirun started was
 * lost. Any thread. */
bool elastic_server_carried(struct elastic_server *s);
/* The membership, once stopped. */
const struct emembers *elastic_server_members(const struct elastic_server *s);
/* Replacements started, and the last one's failure (a status marker, or mpirun's status), once
 * stopped: 0 when every replacement that ended did so cleanly. */
int elastic_server_replacements(const struct elastic_server *s, int *failed_status);
void elastic_server_free(struct elastic_server *s);

#endif /* POPRUN_ELASTIC_SERVER_H */
