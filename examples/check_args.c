/* allreduce-check's options; see usage() for what they mean. */
#include "check_args.h"
#include "common/parse.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage_text =
    "usage: allreduce-check [options]\n"
    "  Every replica all-reduces buffers filled from its replica index over each replica group,\n"
    "  type, operator and size, and checks the exact result and that all replicas agree.\n"
    "  Run it under poprun (poprun --num-replicas 16 --num-instances 4 allreduce-check), or\n"
    "  alone with --replicas.\n"
    "options:\n"
    "  --sizes LIST          bytes per replica, e.g. 0,4,1K,64M (default 0,4,12,68,1K,100K,1M,4M)\n"
    "  --groups LIST         all, consecutive:K, orthogonal:K (default: all and every\n"
    "                        consecutive/orthogonal group of 2 and of half the replicas)\n"
    "  --types LIST          f32,f16 (default both)\n"
    "  --ops LIST            sum,mean,max,min (default all four)\n"
    "  --iterations N        repeat every check N times (default 1)\n"
    "  --replicas N          replicas when run without poprun (default 4)\n"
    "  --ipus-per-replica N  IPUs per replica when run without poprun (default 1)\n"
    "  --exit-before-collective I\n"
    "                        (fault test) instance I leaves before any collective\n"
    "  -v, --verbose         one line per check\n"
    "  -h, --help            this text\n";

#define COUNT_MAX (1 << 30)

static int parse_count(const char *s, int lo, int *out)
{
    long v;
    if (parse_int(s, lo, COUNT_MAX, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* Splits LIST at commas and parses each item with PARSE into slot i of OUT; an empty item is
 * refused like any other that does not parse. WANT says what the items may be. */
static int parse_list(const char *opt, const char *list, int *n, void *out, size_t elem,
                      int (*parse)(const char *, void *), const char *want)
{
    *n = 0;
    for (const char *at = list;; at++) {
        const char *end = strchr(at, ',');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), at);
        if (*n == CHECK_MAX_LIST) {
            fprintf(stderr, "allreduce-check: %s '%s': more than %d items; expected %s\n", opt,
                    list, CHECK_MAX_LIST, want);
            return 2;
        }
        if (len == 0 || len >= sizeof item || parse(item, (char *)out + (size_t)*n * elem) != 0) {
            fprintf(stderr, "allreduce-check: %s '%s': item %d ('%s') is not valid; expected %s\n",
                    opt, list, *n + 1, item, want);
            return 2;
        }
        (*n)++;
        if (!end)
            return 0;
        at = end;
    }
}

static int parse_size_item(const char *s, void *out)
{
    return parse_bytes(s, out);
}

static int parse_group_item(const char *s, void *out)
{
    return gcl_group_parse(s, out);
}

static int parse_type_item(const char *s, void *out)
{
    gcl_dtype_t *t = out;
    return gcl_dtype_parse(s, t) || (*t != GCL_F32 && *t != GCL_F16) ? -1 : 0;
}

static int parse_op_item(const char *s, void *out)
{
    gcl_redop_t *op = out;
    return gcl_redop_parse(s, op) ||
                   (*op != GCL_SUM && *op != GCL_MEAN && *op != GCL_MAX && *op != GCL_MIN)
               ? -1
               : 0;
}

static int parse_option(check_opts_t *o, const char *opt, const char *val)
{
    if (!strcmp(opt, "--sizes"))
        return parse_list(opt, val, &o->nsizes, o->sizes, sizeof o->sizes[0], parse_size_item,
                          "sizes like 0,4,1K,64M");
    if (!strcmp(opt, "--groups"))
        return parse_list(opt, val, &o->ngroups, o->groups, sizeof o->groups[0], parse_group_item,
                          "groups like all,consecutive:2,orthogonal:2");
    if (!strcmp(opt, "--types"))
        return parse_list(opt, val, &o->ntypes, o->types, sizeof o->types[0], parse_type_item,
                          "f32 and f16");
    if (!strcmp(opt, "--ops"))
        return parse_list(opt, val, &o->nops, o->ops, sizeof o->ops[0], parse_op_item,
                          "sum, mean, max and min");
    int *target = !strcmp(opt, "--iterations")               ? &o->iterations
                  : !strcmp(opt, "--replicas")               ? &o->replicas
                  : !strcmp(opt, "--ipus-per-replica")       ? &o->ipus_per_replica
                  : !strcmp(opt, "--exit-before-collective") ? &o->exit_before
                                                             : NULL;
    int lo = !strcmp(opt, "--exit-before-collective") ? 0 : 1;
    if (!target) {
        fprintf(stderr, "allreduce-check: unknown option '%s' (try --help)\n", opt);
        return 2;
    }
    if (parse_count(val, lo, target) != 0) {
        fprintf(stderr, "allreduce-check: %s '%s': expected an integer from %d to %d\n", opt, val,
                lo, COUNT_MAX);
        return 2;
    }
    return 0;
}

/* Whether OPT is an option that takes a value. */
static int takes_value(const char *opt)
{
    static const char *const names[] = {"--sizes",
                                        "--groups",
                                        "--types",
                                        "--ops",
                                        "--iterations",
                                        "--replicas",
                                        "--ipus-per-replica",
                                        "--exit-before-collective"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(opt, names[i]))
            return 1;
    return 0;
}

int check_parse_args(int argc, char **argv, check_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->replicas = 4;
    o->ipus_per_replica = 1;
    o->iterations = 1;
    o->exit_before = -1;
    int rc = parse_option(o, "--sizes", "0,4,12,68,1K,100K,1M,4M");
    rc |= parse_option(o, "--types", "f32,f16");
    rc |= parse_option(o, "--ops", "sum,mean,max,min");
    o->ngroups = 0;
    for (int i = 1; rc == 0 && i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            return 1;
        }
        if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
            o->verbose = 1;
            continue;
        }
        if (strncmp(argv[i], "-", 1) != 0) {
            fprintf(stderr, "allreduce-check: unexpected argument '%s' (try --help)\n", argv[i]);
            return 2;
        }
        if (!takes_value(argv[i])) {
            fprintf(stderr, "allreduce-check: unknown option '%s' (try --help)\n", argv[i]);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "allreduce-check: %s needs a value (try --help)\n", argv[i]);
            return 2;
        }
        rc = parse_option(o, argv[i], argv[i + 1]);
        i++;
    }
    return rc;
}

int check_resolve_groups(check_opts_t *o, int n)
{
    if (o->ngroups == 0) {
        o->groups[o->ngroups++] = gcl_group_all();
        int sizes[2] = {2, n / 2};
        for (int i = 0; i < 2; i++) {
            if (sizes[i] < 2 || sizes[i] >= n || n % sizes[i] || (i == 1 && sizes[1] == 2))
                continue;
            o->groups[o->ngroups++] = gcl_group_consecutive(sizes[i]);
            o->groups[o->ngroups++] = gcl_group_orthogonal(sizes[i]);
        }
        return 0;
    }
    for (int i = 0; i < o->ngroups; i++) {
        gcl_group_t g = o->groups[i];
        if (g.kind != GCL_GROUP_ALL && (g.size > n || n % g.size != 0)) {
            char text[32];
            fprintf(stderr,
                    "allreduce-check: --groups '%s': a group of %d does not divide the %d "
                    "replicas; expected all, or consecutive:K or orthogonal:K with K dividing %d\n",
                    gcl_group_format(g, text, sizeof text), g.size, n, n);
            return 2;
        }
    }
    return 0;
}
