/* sim-step's command line, the model presets, and the checks against the job's shape. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simstep.h"

static const char *const usage =
    "usage: sim-step [options]\n"
    "  Simulates training steps of a described model on a simulated pod (phantom buffers: sizes,\n"
    "  no data) and reports the simulated step time, samples/s and the compute/exchange/sync/idle\n"
    "  split. Run it under poprun, one IPU per pipeline stage:\n"
    "    poprun --num-replicas 64 --num-instances 4 --offline-mode --topology POD64 \\\n"
    "        sim-step --model resnet50\n"
    "    poprun --num-replicas 16 --ipus-per-replica 4 --num-instances 4 --offline-mode \\\n"
    "        --topology POD64 sim-step --model bert-large --global-batch 2048\n"
    "model (a preset fills every number; later options override it):\n"
    "  --model M                  resnet50, bert-large or custom (default custom)\n"
    "  --params N                 parameters (25.6M, 340M, 1.2G, 2.5e7; K M G T are x1000)\n"
    "  --flops-per-sample F       forward FLOPs per sample, whole model (4.1G)\n"
    "  --activation-size N        values per sample crossing a stage boundary (needed by custom\n"
    "                             with more than one stage)\n"
    "  --compute-efficiency E     fraction of the peak FLOPS reached, 0 < E <= 1 (default 1)\n"
    "step:\n"
    "  --micro-batch B            samples per micro-batch and replica (resnet50 16, bert-large 8,\n"
    "                             custom 1)\n"
    "  --gradient-accumulation A  micro-batches per step and replica (resnet50 8, bert-large 32,\n"
    "                             custom 1)\n"
    "  --global-batch G           samples per step over all replicas, instead of -A: A = G/(R*B)\n"
    "  --stages S                 pipeline stages; must equal poprun --ipus-per-replica (default)\n"
    "  --grad-type T              f16 or f32: type of the all-reduced gradients (default f16)\n"
    "  --compute-type T           f16 or f32: compute, weights and activations (default f16)\n"
    "  --steps K                  timed steps (default 2)\n"
    "  --warmup K                 untimed steps first (default 1)\n"
    "output and stand-alone runs:\n"
    "  --json FILE                write the result as one JSON object\n"
    "  --replicas N               replicas without poprun (default 1)\n"
    "  --topology T               simulated pod without poprun: M2000, POD16, POD64, POD128,\n"
    "                             POD256 or a topology file\n"
    "  -h, --help                 this text\n"
    "Every assumed number is listed in examples/simstep/README.md.\n";

typedef struct {
    const char *name;
    double params, flops, act_elems;
    long micro_batch, accum;
} preset_t;

static const preset_t presets[] = {
    {"resnet50", 25.6e6, 4.1e9, 28.0 * 28 * 512, 16, 8},
    {"bert-large", 340e6, 2.0 * 340e6 * 128, 128.0 * 1024, 8, 32},
    {"custom", 0, 0, 0, 1, 1},
};

/* One line naming the option (and its value, when there is one); returns 2. */
static int bad(const char *opt, const char *val, const char *want)
{
    if (val && *val)
        fprintf(stderr, "sim-step: %s '%s': %s\n", opt, val, want);
    else
        fprintf(stderr, "sim-step: %s: %s\n", opt, want);
    return 2;
}

/* "25.6M", "4.1G", "2.5e7": a finite number > 0 with an optional decimal K/M/G/T suffix. */
static int parse_amount(const char *text, double *out)
{
    static const char suffixes[] = "KMGT";
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || !(v > 0))
        return -1;
    const char *s = *end ? strchr(suffixes, *end) : NULL;
    if (*end && !s)
        return -1;
    if (s) {
        v *= pow(1000.0, (double)(s - suffixes + 1));
        end++;
    }
    if (*end || v > 1e18)
        return -1;
    *out = v;
    return 0;
}

static int parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_type(const char *text, gcl_dtype_t *out)
{
    if (gcl_dtype_parse(text, out) || (*out != GCL_F16 && *out != GCL_F32))
        return -1;
    return 0;
}

/* Options that take a number, by name. */
static int number_option(simstep_opts_t *o, const char *opt, const char *v)
{
    static const struct {
        const char *name;
        size_t off;
        long lo, hi;
    } ints[] = {
        {"--micro-batch", offsetof(simstep_opts_t, micro_batch), 1, 1 << 20},
        {"--gradient-accumulation", offsetof(simstep_opts_t, accum), 1, 1 << 20},
        {"--global-batch", offsetof(simstep_opts_t, global_batch), 1, 1L << 40},
        {"--stages", offsetof(simstep_opts_t, stages), 1, 1024},
        {"--steps", offsetof(simstep_opts_t, steps), 1, 1000},
        {"--warmup", offsetof(simstep_opts_t, warmup), 0, 1000},
        {"--replicas", offsetof(simstep_opts_t, replicas), 1, 4096},
    };
    char want[64];
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (strcmp(opt, ints[i].name))
            continue;
        snprintf(want, sizeof want, "expected an integer from %ld to %ld", ints[i].lo, ints[i].hi);
        long *dst = (long *)((char *)o + ints[i].off);
        return parse_long(v, ints[i].lo, ints[i].hi, dst) ? bad(opt, v, want) : 0;
    }
    double *amount = !strcmp(opt, "--params")               ? &o->params
                     : !strcmp(opt, "--flops-per-sample")   ? &o->flops
                     : !strcmp(opt, "--activation-size")    ? &o->act_elems
                     : !strcmp(opt, "--compute-efficiency") ? &o->efficiency
                                                            : NULL;
    if (!amount) {
        fprintf(stderr, "sim-step: unknown option '%s' (try --help)\n", opt);
        return 2;
    }
    if (parse_amount(v, amount))
        return bad(opt, v, "expected a number > 0 like 340M, 4.1G or 2.5e7");
    if (amount == &o->efficiency && o->efficiency > 1)
        return bad(opt, v, "expected a fraction in (0, 1]");
    if (amount == &o->params && o->params < 1)
        return bad(opt, v, "expected at least one parameter");
    return 0;
}

static int option(simstep_opts_t *o, const char *opt, const char *v)
{
    if (!strcmp(opt, "--model")) {
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
            if (!strcmp(v, presets[i].name))
                return (o->model = presets[i].name, 0);
        return bad(opt, v, "expected resnet50, bert-large or custom");
    }
    if (!strcmp(opt, "--grad-type"))
        return parse_type(v, &o->grad_type) ? bad(opt, v, "expected f16 or f32") : 0;
    if (!strcmp(opt, "--compute-type"))
        return parse_type(v, &o->comp_type) ? bad(opt, v, "expected f16 or f32") : 0;
    if (!strcmp(opt, "--json"))
        return (o->json = v, 0);
    if (!strcmp(opt, "--topology"))
        return (o->topology = v, 0);
    return number_option(o, opt, v);
}

/* Fills what the options left unset (zero) from the model's preset. */
static int apply_preset(simstep_opts_t *o)
{
    const preset_t *p = &presets[2];
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(o->model, presets[i].name))
            p = &presets[i];
    if (!o->params)
        o->params = p->params;
    if (!o->flops)
        o->flops = p->flops;
    if (!o->act_elems)
        o->act_elems = p->act_elems;
    if (!o->micro_batch)
        o->micro_batch = p->micro_batch;
    if (!o->accum && !o->global_batch)
        o->accum = p->accum;
    if (!o->params || !o->flops)
        return bad("--model", o->model, "custom needs --params and --flops-per-sample");
    if (o->accum && o->global_batch)
        return bad("--global-batch", NULL,
                   "give --gradient-accumulation or --global-batch, not both");
    return 0;
}

/* Whether NAME is one of the blank-separated words of LIST. */
static int is_known(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; n && (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && p[n] == ' ')
            return 1;
    return 0;
}

int simstep_parse(int argc, char **argv, simstep_opts_t *o)
{
    /* Every option, each followed by a blank, so that strstr finds whole names only. */
    static const char known[] = "--model --params --flops-per-sample --activation-size "
                                "--compute-efficiency --micro-batch --gradient-accumulation "
                                "--global-batch --stages --grad-type --compute-type --steps "
                                "--warmup --json --replicas --topology ";
    *o = (simstep_opts_t){.model = "custom",
                          .efficiency = 1.0,
                          .steps = 2,
                          .warmup = 1,
                          .replicas = 1,
                          .grad_type = GCL_F16,
                          .comp_type = GCL_F16};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (!is_known(known, opt)) {
            fprintf(stderr, "sim-step: %s '%s' (try --help)\n",
                    strncmp(opt, "-", 1) ? "unexpected argument" : "unknown option", opt);
            return 2;
        }
        if (i + 1 >= argc)
            return bad(opt, NULL, "needs a value");
        if (option(o, opt, argv[++i]))
            return 2;
    }
    return apply_preset(o);
}

double simstep_global_batch(const simstep_t *w)
{
    return (double)w->info.num_replicas * (double)w->o.micro_batch * (double)w->accum;
}

int simstep_resolve(simstep_t *w)
{
    const simstep_opts_t *o = &w->o;
    int ipr = w->info.ipus_per_replica, r = w->info.num_replicas;
    char v[32];
    if (o->stages && o->stages != ipr) {
        snprintf(v, sizeof v, "%ld", o->stages);
        return bad("--stages", v,
                   "must equal the job's IPUs per replica (poprun "
                   "--ipus-per-replica)");
    }
    w->stages = ipr;
    w->accum = o->accum;
    if (o->global_batch) {
        long per = (long)r * o->micro_batch;
        snprintf(v, sizeof v, "%ld", o->global_batch);
        if (o->global_batch % per)
            return bad("--global-batch", v, "must be a multiple of replicas x micro-batch");
        w->accum = o->global_batch / per;
    }
    if (ipr > 1 && !(o->act_elems > 0))
        return bad("--activation-size", NULL, "custom models need it with more than one stage");
    double shard = ceil(o->params / ipr);
    double act = (double)o->micro_batch * o->act_elems;
    if (shard > (double)(SIZE_MAX / 8) || act > (double)(SIZE_MAX / 8))
        return bad("--params", NULL, "the model is too large to describe");
    w->grad_count = (size_t)shard;
    w->act_count = ipr > 1 ? (size_t)ceil(act) : 0;
    w->fwd_flops = o->flops * (double)o->micro_batch / ipr / o->efficiency;
    double es = (double)gcl_dtype_size(o->comp_type);
    w->fwd_bytes = (shard + 2.0 * act) * es;
    return 0;
}
