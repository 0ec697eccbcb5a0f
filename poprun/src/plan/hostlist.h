/*
 * Host lists: what -H/--host and --hostfile take.
 *
 * A host list is a comma-separated list of items; an item is a host name in which any number of
 * bracketed ranges expand to several names (as in Slurm):
 *   host0,host1          -> host0 host1
 *   host[0-2,4]          -> host0 host1 host2 host4
 *   node[01-03]          -> node01 node02 node03   (a leading zero keeps the width)
 *   r[1-2]n[1-2]         -> r1n1 r1n2 r2n1 r2n2
 * Host names use letters, digits, '.', '-' and '_'. A name may appear only once.
 */
#ifndef POPRUN_HOSTLIST_H
#define POPRUN_HOSTLIST_H

#include <stddef.h>

#include "common/util.h"

/* At most this many hosts in one job. */
#define HOSTLIST_MAX 4096

/* Appends the hosts of SPEC to OUT. Returns 0, or -1 with a one-line reason in ERR naming SPEC
 * (malformed list, empty name, duplicate host, too many hosts). */
int hostlist_expand(const char *spec, struct strvec *out, char *err, size_t errlen);

/* Reads a hostfile: one host list per line (usually one host); '#' starts a comment; words after
 * the first (OpenMPI's "slots=4") are ignored. Returns 0, or -1 with a reason naming the file and
 * line in ERR. A file with no host is an error. */
int hostlist_read_file(const char *path, struct strvec *out, char *err, size_t errlen);

#endif /* POPRUN_HOSTLIST_H */
