/*
 * The nccl-tests command line (nccl-tests' src/common.cu), checked strictly: a malformed value is
 * one line and exit status 2 where nccl-tests would read it as 0. Flags nccl-tests has for GPUs
 * only (-p -y -G -C -R -T -S) are accepted and checked, and change nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/ref.h"
#include "nccl.h"

/* nccl-tests' type names (those GCL has), then ours. */
static const struct {
    const char *name;
    gcl_dtype_t type;
} type_names[] = {
    {"int32", GCL_I32}, {"uint32", GCL_U32}, {"int64", GCL_I64},     {"uint64", GCL_U64},
    {"half", GCL_F16},  {"float", GCL_F32},  {"bfloat16", GCL_BF16},
};
#define NTYPES (int)(sizeof type_names / sizeof type_names[0])

/* nccl-tests' operator names; others are GCL's (sum/add, mul, square_add, ...). */
static const struct {
    const char *name;
    gcl_redop_t op;
} op_names[] = {
    {"sum", GCL_SUM}, {"prod", GCL_MUL}, {"max", GCL_MAX}, {"min", GCL_MIN}, {"avg", GCL_MEAN}};
#define NOPS (int)(sizeof op_names / sizeof op_names[0])

static int bad(const nccl_coll_t *t, int c, const char *v, const char *want)
{
    fprintf(stderr, "%s: -%c '%s': expected %s\n", t->name, c, v, want);
    return 2;
}

/* "8", "128M", "1.5K", "1G" (binary multiples, as nccl-tests) into *OUT, at most 2^40. */
static int parse_size(const char *v, size_t *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || !isfinite(x) || x < 0)
        return -1;
    double unit = 1;
    if (*end && strchr("kKmMgG", *end))
        unit = *end == 'k' || *end == 'K'   ? 1024.0
               : *end == 'm' || *end == 'M' ? 1048576.0
                                            : 1073741824.0,
        end++;
    if (*end || x * unit > 1099511627776.0)
        return -1;
    *out = (size_t)(x * unit);
    return 0;
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int parse_type(const nccl_coll_t *t, const char *v, nccl_opts_t *o)
{
    o->ntypes = 0;
    for (int i = 0; i < NTYPES; i++) {
        if (!strcmp(v, "all") || !strcasecmp(v, type_names[i].name)) {
            o->types[o->ntypes] = type_names[i].type;
            o->type_names[o->ntypes++] = type_names[i].name;
        }
    }
    if (o->ntypes == 0 && gcl_dtype_parse(v, &o->types[0]) == 0 && o->types[0] != GCL_BOOL) {
        o->type_names[0] = gcl_dtype_name(o->types[0]);
        o->ntypes = 1;
    }
    return o->ntypes ? 0
                     : bad(t, 'd', v,
                           "int32, uint32, int64, uint64, half, float, bfloat16 or all (GCL has "
                           "no int8, uint8 or double)");
}

static int parse_op(const nccl_coll_t *t, const char *v, nccl_opts_t *o)
{
    o->nops = 0;
    for (int i = 0; i < NOPS; i++) {
        if (!strcmp(v, "all") || !strcasecmp(v, op_names[i].name)) {
            o->ops[o->nops] = op_names[i].op;
            o->op_names[o->nops++] = op_names[i].name;
        }
    }
    if (o->nops == 0 && gcl_redop_parse(v, &o->ops[0]) == 0) {
        o->op_names[0] = gcl_redop_name(o->ops[0]);
        o->nops = 1;
    }
    return o->nops ? 0 : bad(t, 'o', v, "sum, prod, max, min, avg, all, or a GCL operator");
}

static void usage(const nccl_coll_t *t)
{
    printf("USAGE: %s\n"
           "\t[-t,--nthreads <num threads>] [-g,--ngpus <replicas per thread>]\n"
           "\t[-b,--minbytes <min size in bytes>] [-e,--maxbytes <max size in bytes>]\n"
           "\t[-i,--stepbytes <increment size>] [-f,--stepfactor <increment factor>]\n"
           "\t[-n,--iters <iteration count>] [-m,--agg_iters <aggregated iteration count>]\n"
           "\t[-w,--warmup_iters <warmup iteration count>] [-N,--run_cycles <cycle count>]\n"
           "\t[-c,--check <check iteration count>] [-o,--op <sum/prod/min/max/avg/all>]\n"
           "\t[-d,--datatype <type/all>] [-r,--root <root/all>] [-z,--blocking <0/1>]\n"
           "\t[-a,--average <0/1/2/3> report average iteration time "
           "<0=RANK0/1=AVG/2=MIN/3=MAX>]\n"
           "\t[-J,--output_file <file> write JSON output to file]\n"
           "\t[-p -y -G -C -R -T -S <n>: GPU-only flags of nccl-tests, accepted, no effect]\n"
           "\t[-h,--help]\n"
           "A rank is a simulated IPU replica: -g x -t per process (mpirun) or poprun instance.\n",
           t->name);
}

static const struct option longopts[] = {
    {"nthreads", required_argument, 0, 't'},
    {"ngpus", required_argument, 0, 'g'},
    {"minbytes", required_argument, 0, 'b'},
    {"maxbytes", required_argument, 0, 'e'},
    {"stepbytes", required_argument, 0, 'i'},
    {"stepfactor", required_argument, 0, 'f'},
    {"iters", required_argument, 0, 'n'},
    {"agg_iters", required_argument, 0, 'm'},
    {"warmup_iters", required_argument, 0, 'w'},
    {"run_cycles", required_argument, 0, 'N'},
    {"parallel_init", required_argument, 0, 'p'},
    {"check", required_argument, 0, 'c'},
    {"op", required_argument, 0, 'o'},
    {"datatype", required_argument, 0, 'd'},
    {"root", required_argument, 0, 'r'},
    {"blocking", required_argument, 0, 'z'},
    {"stream_null", required_argument, 0, 'y'},
    {"timeout", required_argument, 0, 'T'},
    {"cudagraph", required_argument, 0, 'G'},
    {"report_cputime", required_argument, 0, 'C'},
    {"average", required_argument, 0, 'a'},
    {"local_register", required_argument, 0, 'R'},
    {"report_timestamps", required_argument, 0, 'S'},
    {"output_file", required_argument, 0, 'J'},
    {"help", no_argument, 0, 'h'},
    {"_corrupt", no_argument, 0, 1},
    {0, 0, 0, 0},
};

/* An integer flag: its range and where it goes (NULL: accepted, no effect). */
static int set_int(const nccl_coll_t *t, int c, const char *v, nccl_opts_t *o)
{
    static const struct {
        char c;
        long lo, hi;
        size_t off;
    } ints[] = {
        {'t', 1, 1024, offsetof(nccl_opts_t, nthreads)},
        {'g', 1, 1024, offsetof(nccl_opts_t, ngpus)},
        {'n', 0, 100000000, offsetof(nccl_opts_t, iters)},
        {'m', 1, 1024, offsetof(nccl_opts_t, agg)},
        {'w', 0, 100000000, offsetof(nccl_opts_t, warmup)},
        {'N', 1, 1000000, offsetof(nccl_opts_t, cycles)},
        {'c', 0, 1000000, offsetof(nccl_opts_t, check)},
        {'z', 0, 1, offsetof(nccl_opts_t, blocking)},
        {'a', 0, 3, offsetof(nccl_opts_t, average)},
        {'p', 0, 1, (size_t)-1},
        {'y', 0, 1, (size_t)-1},
        {'T', 0, 86400, (size_t)-1},
        {'G', 0, 1000000, (size_t)-1},
        {'C', 0, 1, (size_t)-1},
        {'R', 0, 4, (size_t)-1},
        {'S', 0, 1, (size_t)-1},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        long x;
        char want[64];
        if (ints[i].c != c)
            continue;
        snprintf(want, sizeof want, "an integer from %ld to %ld", ints[i].lo, ints[i].hi);
        if (parse_long(v, ints[i].lo, ints[i].hi, &x) != 0)
            return bad(t, c, v, want);
        if (ints[i].off != (size_t)-1)
            *(int *)((char *)o + ints[i].off) = (int)x;
        if (c == 't' || c == 'g')
            o->ngpus_set = 1;
        return 0;
    }
    return bad(t, c, v, "a known flag");
}

static int set_one(const nccl_coll_t *t, int c, const char *v, nccl_opts_t *o)
{
    long x;
    switch (c) {
    case 'b':
        return parse_size(v, &o->min_bytes) ? bad(t, c, v, "a size such as 8, 64K or 128M") : 0;
    case 'e':
        return parse_size(v, &o->max_bytes) ? bad(t, c, v, "a size such as 8, 64K or 128M") : 0;
    case 'i':
        return parse_size(v, &o->step_bytes) || o->step_bytes == 0
                   ? bad(t, c, v, "a positive size such as 1M")
                   : 0;
    case 'f':
        if (parse_long(v, 1, 1 << 20, &x) != 0)
            return bad(t, c, v, "an integer factor from 1 to 1048576");
        o->step_factor = (size_t)x;
        return 0;
    case 'd':
        return parse_type(t, v, o);
    case 'o':
        return parse_op(t, v, o);
    case 'r':
        if (!strcmp(v, "all"))
            return o->root = -1, 0;
        return parse_long(v, 0, 1 << 20, &x) ? bad(t, c, v, "a rank or all")
                                             : (o->root = (int)x, 0);
    case 'J':
        return (o->json = v), *v ? 0 : bad(t, c, v, "a file name");
    default:
        return set_int(t, c, v, o);
    }
}

static void defaults(nccl_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->nthreads = o->ngpus = 1;
    o->min_bytes = o->max_bytes = 32u << 20;
    o->step_bytes = 1u << 20;
    o->step_factor = 1;
    o->iters = 20;
    o->warmup = 5;
    o->agg = 1;
    o->check = 1;
    o->average = 1;
    o->cycles = 1;
    o->ntypes = o->nops = 1;
    o->types[0] = GCL_F32;
    o->type_names[0] = "float";
    o->ops[0] = GCL_SUM;
    o->op_names[0] = "sum";
}

int nccl_parse(const nccl_coll_t *t, int argc, char **argv, nccl_opts_t *o)
{
    defaults(o);
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, ":t:g:b:e:i:f:n:m:w:N:p:c:o:d:r:z:y:T:G:C:a:R:S:J:h",
                            longopts, NULL)) != -1) {
        if (c == 'h')
            return usage(t), 1;
        if (c == 1) {
            o->corrupt = 1;
            continue;
        }
        if (c == '?' || c == ':') {
            fprintf(stderr, "%s: %s '%s' (see --help)\n", t->name,
                    c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
            return 2;
        }
        rc = set_one(t, c, optarg, o);
    }
    if (rc)
        return rc;
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", t->name, argv[optind]);
        return 2;
    }
    if (o->min_bytes > o->max_bytes) {
        fprintf(stderr,
                "%s: invalid sizes for 'minbytes' and 'maxbytes': %zu > %zu; expected -b at most "
                "-e\n",
                t->name, o->min_bytes, o->max_bytes);
        return 2;
    }
    return 0;
}
