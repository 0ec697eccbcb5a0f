/*
 * The mpirun argument vector; see mpirun_cmd.h.
 */
#include "mpirun_cmd.h"

#include <stdio.h>

#include "words.h"

static void push_int(struct strvec *argv, const char *opt, int v)
{
    strvec_push(argv, opt);
    strvec_push_take(argv, xasprintf("%d", v));
}

/* "h1:2,h2:2": every host with its number of instances as slots. */
static char *host_slots(const struct plan *p)
{
    struct strvec items = STRVEC_INIT;
    for (int h = 0; h < p->hosts.n; h++)
        strvec_push_take(&items, xasprintf("%s:%d", p->hosts.v[h], p->instances_per_host));
    char *s = strvec_join(&items, ",");
    strvec_free(&items);
    return s;
}

/* Splits the words of an --mpi-*-args option onto ARGV. */
static int push_words(struct strvec *argv, const char *opt, const char *value, char *err,
                      size_t errlen)
{
    char e[128];
    if (value && words_split(value, argv, e, sizeof(e)) != 0)
        return errf(err, errlen, "--%s: %s", opt, e);
    return 0;
}

/* The wrapper's command: poprun itself in instance mode, then the program. */
static void push_wrapper(const struct mpirun_cmd *c, struct strvec *argv)
{
    const struct poprun_options *o = c->opts;
    const struct plan *p = c->plan;
    strvec_push(argv, c->self);
    strvec_push(argv, "--_instance");
    strvec_push(argv, c->token);
    push_int(argv, "--num-replicas", p->num_replicas);
    push_int(argv, "--num-instances", p->num_instances);
    push_int(argv, "--ipus-per-replica", p->ipus_per_replica);
    push_int(argv, "--num-ilds", p->num_ilds);
    if (c->topology) {
        strvec_push(argv, "--topology");
        strvec_push(argv, c->topology);
    }
    if (!p->local) {
        strvec_push(argv, "--host");
        strvec_push_take(argv, strvec_join(&p->hosts, ","));
    }
    if (o->offline_mode)
        strvec_push(argv, "--offline-mode");
    if (o->numa_aware)
        strvec_push(argv, "--numa-aware");
    if (o->only_output_from_instance >= 0)
        push_int(argv, "--only-output-from-instance", o->only_output_from_instance);
    for (int v = 0; v < o->verbose && v < 9; v++)
        strvec_push(argv, "-v");
    strvec_push(argv, "--");
    strvec_extend(argv, &o->program);
}

int mpirun_cmd_build(const struct mpirun_cmd *c, struct strvec *argv, char *err, size_t errlen)
{
    strvec_push(argv, c->mpirun);
    if (c->as_root)
        strvec_push(argv, "--allow-run-as-root");
    strvec_push(argv, "--oversubscribe");
    strvec_push(argv, "--bind-to");
    strvec_push(argv, "none");
    if (!c->plan->local) {
        strvec_push(argv, "--host");
        strvec_push_take(argv, host_slots(c->plan));
        strvec_push(argv, "--map-by");
        strvec_push(argv, "slot");
    }
    if (push_words(argv, "mpi-global-args", c->opts->mpi_global_args, err, errlen) != 0)
        return -1;
    push_int(argv, "-np", c->plan->num_instances);
    if (push_words(argv, "mpi-local-args", c->opts->mpi_local_args, err, errlen) != 0)
        return -1;
    push_wrapper(c, argv);
    return 0;
}
