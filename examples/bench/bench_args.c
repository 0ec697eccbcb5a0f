/* gcl-bench's command line. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "common/parse.h"

static const char *const usage =
    "usage: gcl-bench COLLECTIVE [options]\n"
    "  COLLECTIVE: all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, barrier\n"
    "  Run it under poprun: poprun --num-replicas 8 --num-instances 4 gcl-bench all_reduce\n"
    "options:\n"
    "  -b, --minbytes SIZE   smallest size (default 1K); sizes take K, M, G suffixes\n"
    "  -e, --maxbytes SIZE   largest size (default 16M)\n"
    "  -f, --stepfactor N    multiply the size by N each row (default 2)\n"
    "      --sizes LIST      these sizes instead of -b/-e/-f, e.g. 8,64,1K,4K\n"
    "  -n, --iters N|auto    timed iterations per batch (default 20; auto: batches of ~20 ms)\n"
    "  -w, --warmup N        untimed iterations first (default 5)\n"
    "      --repeats R       batches timed per size, the median reported (default 1;\n"
    "                        the comparison's rule: -n auto --repeats 5, see rule.h)\n"
    "      --latency         time single calls, each followed by a barrier: median and p99\n"
    "                        per size (default sizes 8,64,1K,4K)\n"
    "      --samples S       timed calls per size with --latency (default 1000)\n"
    "  -t, --type TYPE       f32 f16 bf16 i32 i64 u32 u64 bool (default f32)\n"
    "  -o, --op OP           sum mean mul min max square_add logical_and logical_or local\n"
    "                        (default sum)\n"
    "  -g, --group GROUP     all, consecutive:K or orthogonal:K (default all)\n"
    "  -a, --algo NAME       force an algorithm (default: the automatic choice)\n"
    "  -r, --root R          broadcast root (default 0)\n"
    "  -c, --check           check every result against its exact value (#wrong column)\n"
    "      --compare mpi-in-job  also time the matching MPI collective inside this job, on the\n"
    "                        same buffers (one replica per instance; MPI shares the job with\n"
    "                        libgcl: a sanity check, not a fair peer; scripts/bench-collectives\n"
    "                        --peers runs MPI as its users do)\n"
    "      --json FILE       write the rows as a JSON list\n"
    "      --csv FILE        append the rows in the peer comparison's columns\n"
    "      --memcpy          also measure one thread's memcpy bandwidth (largest size), for\n"
    "                        reference\n"
    "      --phantom         buffers carry sizes but no data (simulated time only)\n"
    "      --topology T      simulated pod: M2000, POD16, POD64, POD128, POD256 or a file\n"
    "      --replicas N      replicas when run without poprun (default 4)\n"
    "  -h, --help            this text\n"
    "Size is nccl-tests' size: the per-rank buffer of all_reduce, broadcast and all_to_all,\n"
    "the input of reduce_scatter and the output of all_gather.\n";

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "gcl-bench: %s '%s': %s\n", opt, val ? val : "", want);
    return 2;
}

/* Whether COLLECTIVE has an algorithm called NAME ("auto" is the automatic choice); if not,
 * says which it has, as the library lists them. Returns 0 or 2. */
static int check_algo(const char *collective, const char *opt, const char *name)
{
    const char *names[64];
    int n = gcl_algorithms(collective, names, 64);
    if (!strcmp(name, "auto"))
        return 0;
    for (int i = 0; i < n && i < 64; i++)
        if (!strcmp(name, names[i]))
            return 0;
    char want[1024];
    size_t used =
        (size_t)snprintf(want, sizeof want, "%s has no such algorithm; expected auto", collective);
    for (int i = 0; i < n && i < 64 && used < sizeof want; i++)
        used += (size_t)snprintf(want + used, sizeof want - used, "%s%s",
                                 i == n - 1 ? " or " : ", ", names[i]);
    return bad(opt, name, want);
}

/* A list of sizes, "8,64,1K,4K"; every item must be a size (an empty one too is refused).
 * Returns 0 or 2 after saying which item is wrong. */
static int parse_sizes(bench_opts_t *o, const char *opt, const char *text)
{
    char want[192];
    o->nsizes = 0;
    for (const char *at = text;; at++) {
        const char *end = strchr(at, ',');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), at);
        if (o->nsizes >= BENCH_MAX_ROWS) {
            snprintf(want, sizeof want, "expected at most %d sizes", BENCH_MAX_ROWS);
            return bad(opt, text, want);
        }
        if (len == 0 || len >= sizeof item || parse_bytes(item, &o->sizes[o->nsizes])) {
            snprintf(want, sizeof want,
                     "item %d ('%s') is not a size; expected sizes like "
                     "8,64,1K,4K",
                     o->nsizes + 1, item);
            return bad(opt, text, want);
        }
        o->nsizes++;
        if (!end)
            return 0;
        at = end;
    }
}

/* The options that take a value (each as short and long name, or twice its long name). */
static const char *const valued[][2] = {
    {"-b", "--minbytes"}, {"-e", "--maxbytes"}, {"-f", "--stepfactor"}, {"-n", "--iters"},
    {"-w", "--warmup"},   {"-t", "--type"},     {"-o", "--op"},         {"-g", "--group"},
    {"-a", "--algo"},     {"-r", "--root"},     {"--repeats", ""},      {"--samples", ""},
    {"--sizes", ""},      {"--compare", ""},    {"--json", ""},         {"--csv", ""},
    {"--topology", ""},   {"--replicas", ""},
};

static int takes_value(const char *opt)
{
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
        if (!strcmp(opt, valued[i][0]) || (valued[i][1][0] && !strcmp(opt, valued[i][1])))
            return 1;
    return 0;
}

/* An integer option from LO to HI into *OUT; returns 0 or 2 after saying what it takes. */
static int count(const char *opt, const char *v, long lo, long hi, long *out)
{
    char want[80];
    if (parse_int(v, lo, hi, out) == 0)
        return 0;
    snprintf(want, sizeof want, "expected an integer from %ld to %ld", lo, hi);
    return bad(opt, v, want);
}

/* One option with its value; returns 0 or 2. */
static int option(bench_opts_t *o, const char *opt, const char *v)
{
    long x;
#define IS(s, l) (!strcmp(opt, s) || !strcmp(opt, l))
    if (IS("-b", "--minbytes"))
        return parse_bytes(v, &o->min_bytes) ? bad(opt, v, "expected a size like 4, 1K, 64M")
                                             : (o->min_text = v, 0);
    if (IS("-e", "--maxbytes"))
        return parse_bytes(v, &o->max_bytes) ? bad(opt, v, "expected a size like 4, 1K, 64M")
                                             : (o->max_text = v, 0);
    if (IS("-f", "--stepfactor"))
        return count(opt, v, 2, 1024, &o->factor);
    if (IS("-n", "--iters") && !strcmp(v, "auto"))
        return (o->iters = 0, 0);
    if (IS("-n", "--iters"))
        return parse_int(v, 1, 1000000, &o->iters)
                   ? bad(opt, v, "expected auto or an integer from 1 to 1000000")
                   : 0;
    if (IS("--repeats", "--repeats"))
        return count(opt, v, 1, 64, &x) ? 2 : (o->repeats = (int)x, 0);
    if (IS("--samples", "--samples"))
        return count(opt, v, 1, 1000000, &o->samples);
    if (IS("--sizes", "--sizes"))
        return parse_sizes(o, opt, v);
    if (IS("-w", "--warmup"))
        return count(opt, v, 0, 1000000, &o->warmup);
    if (IS("-t", "--type"))
        return gcl_dtype_parse(v, &o->type) ? bad(opt, v,
                                                  "expected f32 f16 bf16 i32 i64 u32 "
                                                  "u64 or bool")
                                            : 0;
    if (IS("-o", "--op"))
        return gcl_redop_parse(v, &o->op) ? bad(opt, v,
                                                "expected sum mean mul min max "
                                                "square_add logical_and logical_or local")
                                          : 0;
    if (IS("-g", "--group"))
        return gcl_group_parse(v, &o->group) ? bad(opt, v,
                                                   "expected all, consecutive:K or "
                                                   "orthogonal:K")
                                             : 0;
    if (IS("-a", "--algo"))
        return check_algo(o->collective, opt, v) ? 2 : (o->algo = v, 0);
    if (IS("-r", "--root"))
        return count(opt, v, 0, 1 << 20, &x) ? 2 : (o->root = (int)x, 0);
    if (IS("--compare", "--compare")) {
        if (!strcmp(v, "mpi"))
            return bad(opt, v,
                       "renamed 'mpi-in-job' (it times MPI inside this job, beside libgcl); "
                       "scripts/bench-collectives --peers mpi times MPI in its own job");
        return strcmp(v, "mpi-in-job") ? bad(opt, v, "the only comparison is 'mpi-in-job'")
                                       : (o->compare_in_job = 1, 0);
    }
    const char **text = IS("--json", "--json")           ? &o->json
                        : IS("--csv", "--csv")           ? &o->csv
                        : IS("--topology", "--topology") ? &o->topology
                                                         : NULL;
    if (text)
        return (*text = v, 0);
    if (IS("--replicas", "--replicas"))
        return count(opt, v, 1, 4096, &x) ? 2 : (o->replicas = (int)x, 0);
#undef IS
    fprintf(stderr, "gcl-bench: unknown option '%s' (try --help)\n", opt);
    return 2;
}

/* What no single option shows: the operator against the type, the sizes' order, --check. */
static int check_options(const bench_opts_t *o, int op_given)
{
    /* The operator of a reducing collective must suit its type, as the library judges it. */
    const char *why;
    if ((!strcmp(o->collective, "all_reduce") || !strcmp(o->collective, "reduce_scatter")) &&
        gcl_redop_check(o->type, o->op, &why)) {
        char want[256];
        if (op_given) {
            snprintf(want, sizeof want, "not defined on %s (-t): %s", gcl_dtype_name(o->type), why);
            return bad("-o", gcl_redop_name(o->op), want);
        }
        snprintf(want, sizeof want, "the default operator (-o %s) is not defined on it: %s",
                 gcl_redop_name(o->op), why);
        return bad("-t", gcl_dtype_name(o->type), want);
    }
    if (o->min_bytes > o->max_bytes) {
        char want[160];
        snprintf(want, sizeof want,
                 "the smallest size is larger than the largest (-e '%s'); "
                 "expected at most %zu bytes",
                 o->max_text ? o->max_text : "16M", o->max_bytes);
        return bad("-b", o->min_text ? o->min_text : "1K", want);
    }
    if (o->check && o->phantom) {
        fprintf(stderr, "gcl-bench: --check with --phantom: phantom buffers hold no data to check; "
                        "give one or the other\n");
        return 2;
    }
    if (o->latency && (o->phantom || o->compare_in_job)) {
        fprintf(stderr,
                "gcl-bench: --latency with %s: --latency times real calls only; give "
                "one or the other\n",
                o->phantom ? "--phantom" : "--compare");
        return 2;
    }
    return 0;
}

/* The options without a value: sets the one OPT names and returns 1, or returns 0. */
static int switched(bench_opts_t *o, const char *opt)
{
    int *flag = !strcmp(opt, "-c") || !strcmp(opt, "--check") ? &o->check
                : !strcmp(opt, "--phantom")                   ? &o->phantom
                : !strcmp(opt, "--memcpy")                    ? &o->memcpy_ref
                : !strcmp(opt, "--latency")                   ? &o->latency
                                                              : NULL;
    if (flag)
        *flag = 1;
    return flag != NULL;
}

int bench_parse(int argc, char **argv, bench_opts_t *o)
{
    *o = (bench_opts_t){.min_bytes = 1024,
                        .max_bytes = 16u << 20,
                        .factor = 2,
                        .iters = 20,
                        .warmup = 5,
                        .repeats = 1,
                        .samples = 1000,
                        .type = GCL_F32,
                        .op = GCL_SUM,
                        .group = gcl_group_all(),
                        .replicas = 4};
    int i = 1, op_given = 0, sizes_given = 0;
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage, stdout);
        return 1;
    }
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "gcl-bench: name a collective first (try --help)\n");
        return 2;
    }
    o->collective = argv[i++];
    if (gcl_algorithms(o->collective, NULL, 0) < 0)
        return bad("collective", o->collective,
                   "expected all_reduce, reduce_scatter, "
                   "all_gather, broadcast, all_to_all or barrier");
    for (; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (switched(o, opt))
            continue;
        if (!takes_value(opt)) {
            fprintf(stderr, "gcl-bench: unknown option '%s' (try --help)\n", opt);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gcl-bench: %s needs a value (try --help)\n", opt);
            return 2;
        }
        op_given |= !strcmp(opt, "-o") || !strcmp(opt, "--op");
        sizes_given |= !strcmp(opt, "-b") || !strcmp(opt, "--minbytes") || !strcmp(opt, "-e") ||
                       !strcmp(opt, "--maxbytes");
        if (option(o, opt, argv[++i]))
            return 2;
    }
    if (o->latency && !o->nsizes && !sizes_given) {
        static const size_t dflt[] = {8, 64, 1024, 4096};
        o->nsizes = 4;
        memcpy(o->sizes, dflt, sizeof dflt);
    }
    return check_options(o, op_given);
}
