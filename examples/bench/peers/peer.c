/* The peer programs' shared command line and output: see peer.h. */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"

static const char *const usage =
    "usage: %s COLLECTIVE [options]   (COLLECTIVE: all_reduce, broadcast or barrier; f32, sum)\n"
    "  -b, --minbytes SIZE  smallest size (default 4K); K, M, G suffixes\n"
    "  -e, --maxbytes SIZE  largest size (default 256M)\n"
    "  -f, --stepfactor N   size factor between rows (default 4)\n"
    "      --sizes LIST     these sizes instead, e.g. 8,64,1K,4K\n"
    "  -n, --iters N|auto   calls per timed batch (default auto: batches of ~20 ms)\n"
    "  -w, --warmup N       untimed calls first (default 5)\n"
    "      --repeats R      batches timed per size; the median is reported (default 5)\n"
    "      --latency        time single calls: median and p99 (default sizes 8,64,1K,4K)\n"
    "      --samples S      timed calls per size with --latency (default 1000)\n"
    "  -a, --algo NAME      the algorithm (%s)\n"
    "      --no-check       do not check a result per size\n"
    "      --csv FILE       append the rows to FILE (the comparison's columns)\n"
    "A barrier is timed with --latency only, as one row of size 0.\n"
    "The timing rule is gcl-bench's (examples/bench/rule.h).\n";

static int bad(const char *prog, const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "%s: %s '%s': %s\n", prog, opt, val ? val : "", want);
    return 2;
}

static int parse_sizes(const char *text, peer_opts_t *o)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    o->nsizes = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nsizes >= PEER_MAX_SIZES || parse_bytes(t, &o->sizes[o->nsizes]) ||
            o->sizes[o->nsizes] < 4)
            return -1;
        o->nsizes++;
    }
    return o->nsizes ? 0 : -1;
}

static void sweep(peer_opts_t *o, size_t lo, size_t hi, long f)
{
    o->nsizes = 0;
    for (size_t s = lo; o->nsizes < PEER_MAX_SIZES; s *= (size_t)f) {
        o->sizes[o->nsizes++] = s > hi ? hi : s;
        if (s >= hi)
            break;
    }
}

/* One option with a value. */
static int option(const char *prog, const char *const *algos, peer_opts_t *o, const char *opt,
                  const char *v, size_t *lo, size_t *hi, long *f, int *listed)
{
    long x;
#define IS(s, l) (!strcmp(opt, s) || !strcmp(opt, l))
    if (IS("-b", "--minbytes"))
        return parse_bytes(v, lo) || *lo < 4 ? bad(prog, opt, v, "expected a size from 4") : 0;
    if (IS("-e", "--maxbytes"))
        return parse_bytes(v, hi) || *hi < 4 ? bad(prog, opt, v, "expected a size from 4") : 0;
    if (IS("-f", "--stepfactor"))
        return parse_int(v, 2, 1024, f) ? bad(prog, opt, v, "expected an integer from 2") : 0;
    if (IS("--sizes", "--sizes"))
        return parse_sizes(v, o) ? bad(prog, opt, v, "expected sizes like 8,64,1K,4K")
                                 : (*listed = 1, 0);
    if (IS("-n", "--iters")) {
        if (!strcmp(v, "auto"))
            return (o->rule.iters = 0, 0);
        return parse_int(v, 1, RULE_MAX_CALLS, &o->rule.iters)
                   ? bad(prog, opt, v, "expected auto or an integer from 1")
                   : 0;
    }
    if (IS("-w", "--warmup"))
        return parse_int(v, 0, 1000000, &o->rule.warmup) ? bad(prog, opt, v, "expected >= 0") : 0;
    if (IS("--repeats", "--repeats")) {
        if (parse_int(v, 1, 64, &x))
            return bad(prog, opt, v, "expected an integer from 1 to 64");
        return (o->rule.repeats = (int)x, 0);
    }
    if (IS("--samples", "--samples"))
        return parse_int(v, 1, 1000000, &o->samples) ? bad(prog, opt, v, "expected >= 1") : 0;
    if (IS("--csv", "--csv"))
        return (o->csv = v, 0);
    if (IS("-a", "--algo")) {
        for (int i = 0; algos[i]; i++)
            if (!strcmp(v, algos[i]))
                return (o->algo = algos[i], 0);
        return bad(prog, opt, v, "not an algorithm of this peer (try --help)");
    }
#undef IS
    fprintf(stderr, "%s: unknown option '%s' (try --help)\n", prog, opt);
    return 2;
}

int peer_parse(int argc, char **argv, const char *prog, const char *const *algos, peer_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->rule = rule_default();
    o->samples = 1000;
    o->check = 1;
    o->algo = algos[0];
    char names[256] = "";
    for (int i = 0; algos[i]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 algos[i]);
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf(usage, prog, names);
        return 1;
    }
    if (argc < 2 || (strcmp(argv[1], "all_reduce") && strcmp(argv[1], "broadcast") &&
                     strcmp(argv[1], "barrier")))
        return bad(prog, "collective", argc > 1 ? argv[1] : "",
                   "expected all_reduce, broadcast or barrier");
    o->collective = argv[1];
    size_t lo = 4096, hi = 256u << 20;
    long f = 4;
    int listed = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--latency")) {
            o->latency = 1;
            continue;
        }
        if (!strcmp(argv[i], "--no-check")) {
            o->check = 0;
            continue;
        }
        if (i + 1 >= argc)
            return bad(prog, argv[i], NULL, "needs a value");
        if (option(prog, algos, o, argv[i], argv[i + 1], &lo, &hi, &f, &listed))
            return 2;
        i++;
    }
    if (lo > hi)
        return bad(prog, "-b", "", "the smallest size is larger than the largest (-e)");
    if (!strcmp(o->collective, "barrier")) {
        if (!o->latency)
            return bad(prog, "barrier", "", "is timed with --latency only");
        o->sizes[0] = 0;
        o->nsizes = 1;
        return 0;
    }
    if (!listed && o->latency && lo == 4096 && hi == (256u << 20))
        return parse_sizes("8,64,1K,4K", o) ? 2 : 0;
    if (!listed)
        sweep(o, lo, hi, f);
    return 0;
}

double peer_bus_factor(const char *collective, int n)
{
    if (!strcmp(collective, "barrier"))
        return 0.0;
    if (!strcmp(collective, "broadcast") || n <= 1)
        return strcmp(collective, "broadcast") ? 0.0 : 1.0;
    return 2.0 * (n - 1) / n;
}

void peer_header(const peer_opts_t *o, const char *impl, int ranks, int hosts)
{
    if (o->latency)
        printf("# %s %s (%s): %d ranks on %d host(s), latency: %ld warm-up, %ld single calls\n"
               "# %12s %12s %12s %8s\n",
               impl, o->collective, o->algo, ranks, hosts, o->rule.warmup, o->samples, "size(B)",
               "p50(us)", "p99(us)", "#wrong");
    else
        printf("# %s %s (%s): %d ranks on %d host(s), %ld warm-up, %s calls a batch, median of "
               "%d batches\n# %12s %10s %12s %8s %11s %8s\n",
               impl, o->collective, o->algo, ranks, hosts, o->rule.warmup,
               o->rule.iters ? "fixed" : "calibrated", o->rule.repeats, "size(B)", "iters",
               "time(us)", "spread", "busbw(GB/s)", "#wrong");
    fflush(stdout);
}

int peer_row(const peer_opts_t *o, const char *impl, int ranks, int hosts, const peer_row_t *row)
{
    double t = o->latency ? row->p50_us : row->r.time_us;
    double busbw = t > 0 ? (double)row->bytes / t / 1e3 * peer_bus_factor(o->collective, ranks) : 0;
    if (o->latency)
        printf("  %12zu %12.2f %12.2f %8llu\n", row->bytes, row->p50_us, row->p99_us, row->wrong);
    else
        printf("  %12zu %10ld %12.2f %7.1f%% %11.3f %8llu%s\n", row->bytes, row->r.iters,
               row->r.time_us, 100 * row->r.spread, busbw, row->wrong,
               row->r.stable ? "" : "  (spread above 5%)");
    fflush(stdout);
    if (!o->csv)
        return 0;
    FILE *f = fopen(o->csv, "a");
    if (!f) {
        perror(o->csv);
        return -1;
    }
    /* impl,algo,collective,mode,ranks,hosts,size_bytes,iters,repeats,time_us,spread,
     * busbw_gbs,p99_us,wrong */
    fprintf(f, "%s,%s,%s,%s,%d,%d,%zu,%ld,%d,%.3f,%.4f,%.6f,%.3f,%llu\n", impl, o->algo,
            o->collective, o->latency ? "latency" : "bandwidth", ranks, hosts, row->bytes,
            o->latency ? row->samples : row->r.iters, o->latency ? 1 : row->r.repeats, t,
            o->latency ? 0.0 : row->r.spread, busbw, o->latency ? row->p99_us : -1.0, row->wrong);
    return fclose(f) == 0 ? 0 : -1;
}

float peer_fill(int r, size_t i)
{
    return (float)(r + 1) + (float)(i % 7);
}

float peer_sum(int n, size_t i)
{
    return (float)n * (float)(n + 1) / 2.0f + (float)n * (float)(i % 7);
}
