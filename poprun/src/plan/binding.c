/*
 * The launcher's choice of binding; the rules are in binding.h.
 */
#include "plan/binding.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/options.h"
#include "common/words.h"

/* Whether WORD of --mpi-global-args (NEXT the word after it) asks mpirun to bind. */
static bool binds(const char *word, const char *next)
{
    static const char *const opts[] = {"bind-to", "cpu-set", "cpu-list", "rankfile"};
    const char *w = word[0] == '-' ? word + 1 + (word[1] == '-') : NULL;
    if (!w)
        return false;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        size_t n = strlen(opts[i]);
        if (strncmp(w, opts[i], n) == 0 && (w[n] == '\0' || w[n] == '='))
            return true;
    }
    if (strcmp(word, "-rf") == 0)
        return true;
    return strcmp(w, "mca") == 0 && next && strcmp(next, "hwloc_base_binding_policy") == 0;
}

/* Whether the user asked mpirun itself to bind (rule 3). */
static bool mpirun_binds(const char *global)
{
    const char *env = getenv("OMPI_MCA_hwloc_base_binding_policy");
    if (env && *env)
        return true;
    struct strvec w = STRVEC_INIT;
    char e[128];
    bool found = false;
    if (global && words_split(global, &w, e, sizeof(e)) == 0) {
        for (int i = 0; i < w.n && !found; i++)
            found = binds(w.v[i], i + 1 < w.n ? w.v[i + 1] : NULL);
    }
    strvec_free(&w);
    return found;
}

/* Whether DIR names a network namespace HOST, or RUNID-HOST of the cluster of
 * scripts/netns-cluster this runs in (RUNID in NETNS_CLUSTER_ID). */
static bool is_namespace(const char *dir, const char *host)
{
    const char *run = getenv("NETNS_CLUSTER_ID");
    struct stat st;
    char path[4096];
    if (!dir)
        return false;
    snprintf(path, sizeof(path), "%s/%s", dir, host);
    if (stat(path, &st) == 0)
        return true;
    if (!run || !*run || strchr(run, '/'))
        return false;
    snprintf(path, sizeof(path), "%s/%s-%s", dir, run, host);
    return stat(path, &st) == 0;
}

const char *placement_choose(const struct poprun_options *o, const struct plan *p,
                             const char *netns_dir, char *note, size_t notelen)
{
    note[0] = '\0';
    if (o->process_placement)
        return strcmp(o->process_placement, "disabled") == 0 ? NULL : o->process_placement;
    if (options_spread_numa(o))
        return "spreadnuma";
    if (mpirun_binds(o->mpi_global_args))
        return NULL;
    if (p->local)
        return "spreadcores";
    struct strvec shared = STRVEC_INIT;
    for (int h = 0; h < p->hosts.n; h++) {
        if (is_namespace(netns_dir, p->hosts.v[h]))
            strvec_push(&shared, p->hosts.v[h]);
    }
    if (shared.n > 0) {
        char *names = strvec_join(&shared, ", ");
        snprintf(note, notelen,
                 "poprun: instances are not bound to cores: host%s %s %s network namespace%s of "
                 "this machine, whose cores %s share (--process-placement spreadcores binds "
                 "anyway)",
                 shared.n == 1 ? "" : "s", names, shared.n == 1 ? "is a" : "are",
                 shared.n == 1 ? "" : "s", shared.n == 1 ? "its instances" : "they");
        free(names);
    }
    int n = shared.n;
    strvec_free(&shared);
    return n > 0 ? NULL : "spreadcores";
}
