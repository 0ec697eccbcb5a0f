/* sim-step's command line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "simstep.h"

static const char *const usage =
    "usage: sim-step --model resnet50|bert-large|FILE [options]\n"
    "  Simulates training steps of a model, layer by layer, on a simulated GC200 pod (phantom\n"
    "  buffers: sizes, no data) and reports the step time, samples/s, the compute / exchange /\n"
    "  sync / host / idle split, each stage's memory, and the time to train. Alone, or under\n"
    "  poprun with one IPU per pipeline stage:\n"
    "    sim-step --model resnet50 --replicas 16 --topology POD16\n"
    "    sim-step --model bert-large --replicas 4 --stages 4 --micro-batch 4 \\\n"
    "        --gradient-accumulation 192 --sequence-length 512 --topology POD16\n"
    "    poprun --num-replicas 64 --num-instances 4 --offline-mode --topology POD64 \\\n"
    "        sim-step --model resnet50 --gradient-accumulation 3\n"
    "model:\n"
    "  --model M                  resnet50, bert-large or a model file (format: sim/README.md)\n"
    "  --sequence-length N        bert-large: 128 or 512 (default 512)\n"
    "  --sequences-per-pack N     sequences per pack of a packed model, a fraction allowed\n"
    "                             (default 1: unpacked; Graphcore's packed BERT: 2)\n"
    "  --dump-model               print the model as a model file and exit\n"
    "job (defaults: the model's calibration point; resnet50 20 x 10, bert-large 4 x 192 on 4\n"
    "stages, a model file 1 x 1 on 1 stage):\n"
    "  --micro-batch B            samples per micro-batch and replica\n"
    "  --gradient-accumulation A  micro-batches per step and replica\n"
    "  --global-batch G           samples per step over all replicas, instead of -A\n"
    "  --stages K                 pipeline stages; under poprun, its --ipus-per-replica\n"
    "  --replicas R               replicas without poprun (default 1)\n"
    "  --topology T               the pod without poprun: M2000, POD16, POD64, POD128, POD256,\n"
    "                             a topology file, either with ,KEY=VALUE overrides\n"
    "  --ipu gc200|bow            the IPU of the pod (default gc200, or the topology's)\n"
    "  --schedule popart|gpipe|1f1b   pipeline order (default popart: PopART's lock-step\n"
    "                             cycles, which Graphcore's pipelines ran)\n"
    "  --pipeline-splits LIST     first layer (name or index) of stages 1..K-1, comma-separated\n"
    "                             (default: the balancing rule)\n"
    "  --att-ffn-placement LIST   attention/feed-forward sublayers per IPU, e.g. 4/5,7/6,6/7,7/6\n"
    "                             (IPU 0 also holds the embedding and the heads)\n"
    "  --layers-per-ipu LIST      the same with both counts equal, e.g. 3,7,7,7 (a model\n"
    "                             without sublayers: its layers per IPU)\n"
    "  --recompute none|checkpoints|stage   (default: the model's)\n"
    "  --optimizer sgd|momentum|lars|lamb|adam   (default: the model's)\n"
    "  --optimizer-state-offchip  the optimizer state in Streaming Memory, read and written\n"
    "                             over the gateway at every update\n"
    "  --replicated-tensor-sharding on|off   the state (and the update) split over the\n"
    "                             replicas: reduce-scatter, update a shard, all-gather\n"
    "  --optimizer-state on-chip|sharded|streaming|streaming-sharded   both at once\n"
    "                             (default: the model's)\n"
    "  --grad-type f16|f32        gradients and their reduction (default f16)\n"
    "host:\n"
    "  --host-servers N           host servers feeding the job (default: one per 16 IPUs)\n"
    "  --host-samples-per-s N     one server's preprocessing rate (default: the model's)\n"
    "time to train:\n"
    "  --epochs E                 epochs of the model's dataset to converge\n"
    "  --train-samples N          or samples to converge\n"
    "  --eval-samples N           samples of one evaluation (forward passes only; default 0)\n"
    "  --eval-every N             training samples between evaluations (default: one epoch)\n"
    "  --run-overhead-s S         start-up and anything else per run (default 0)\n"
    "plan (the best ways to run the model on the pod, each simulated in full):\n"
    "  --plan                     search replicas x stages, placements, micro-batch x\n"
    "                             accumulation, optimizer state, sharding and recomputation\n"
    "                             (needs --topology and --global-batch, which may be a range\n"
    "                             LO-HI; --replicas fixes the replicas)\n"
    "  --max-stages K             largest pipeline searched (default 16)\n"
    "  --memory-reserve MB        memory every IPU keeps free (default 69.1: what the memory\n"
    "                             model leaves out, docs/planner.md)\n"
    "  --top N                    rows printed (default 5)\n"
    "  --no-ranges                do not simulate the printed rows again under the\n"
    "                             leave-one-out sets of the fitted constants\n"
    "output:\n"
    "  --steps K                  timed steps (default 2)\n"
    "  --warmup K                 untimed steps first (default 1)\n"
    "  --json FILE                write the result as one JSON object\n"
    "  --sensitivity              rerun with every assumed and fitted constant halved and\n"
    "                             doubled, and print how the step time moves (without poprun)\n"
    "  -h, --help                 this text\n"
    "Every constant: docs/validation.md; the model and options: examples/simstep/README.md.\n";

static int bad(const char *opt, const char *val, const char *want)
{
    if (val && *val)
        fprintf(stderr, "sim-step: %s '%s': %s\n", opt, val, want);
    else
        fprintf(stderr, "sim-step: %s: %s\n", opt, want);
    return 2;
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

static int parse_double(const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* --global-batch G, or with --plan a range LO-HI. */
static int global_batch(simstep_opts_t *o, const char *v)
{
    char lo[32];
    const char *dash = strchr(v, '-');
    size_t n = dash ? (size_t)(dash - v) : strlen(v);

    if (n == 0 || n >= sizeof lo)
        return bad("--global-batch", v, "expected a number of samples, or a range LO-HI");
    memcpy(lo, v, n);
    lo[n] = '\0';
    if (parse_long(lo, 1, 1L << 40, &o->global_batch) ||
        (dash && parse_long(dash + 1, o->global_batch, 1L << 40, &o->gb_hi)))
        return bad("--global-batch", v, "expected a number of samples, or a range LO-HI");
    return 0;
}

/* Integer options, by name. */
static int int_option(simstep_opts_t *o, const char *opt, const char *v, int *done)
{
    static const struct {
        const char *name;
        size_t off;
        long lo, hi;
    } ints[] = {
        {"--micro-batch", offsetof(simstep_opts_t, micro_batch), 1, 1 << 20},
        {"--gradient-accumulation", offsetof(simstep_opts_t, accum), 1, 1 << 16},
        {"--max-stages", offsetof(simstep_opts_t, max_stages), 1, SIMSTEP_MAX_STAGES},
        {"--top", offsetof(simstep_opts_t, top), 1, 1000},
        {"--stages", offsetof(simstep_opts_t, stages), 1, SIMSTEP_MAX_STAGES},
        {"--steps", offsetof(simstep_opts_t, steps), 1, 1000},
        {"--warmup", offsetof(simstep_opts_t, warmup), 0, 1000},
        {"--replicas", offsetof(simstep_opts_t, replicas), 1, 4096},
        {"--host-servers", offsetof(simstep_opts_t, host_servers), 1, 4096},
    };
    char want[64];

    *done = 0;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (strcmp(opt, ints[i].name))
            continue;
        *done = 1;
        snprintf(want, sizeof want, "expected an integer from %ld to %ld", ints[i].lo, ints[i].hi);
        long *dst = (long *)((char *)o + ints[i].off);
        return parse_long(v, ints[i].lo, ints[i].hi, dst) ? bad(opt, v, want) : 0;
    }
    return 0;
}

/* Options that take a real number. */
static int real_option(simstep_opts_t *o, const char *opt, const char *v, int *done)
{
    double *dst = !strcmp(opt, "--epochs")               ? &o->epochs
                  : !strcmp(opt, "--train-samples")      ? &o->train_samples
                  : !strcmp(opt, "--run-overhead-s")     ? &o->overhead_s
                  : !strcmp(opt, "--host-samples-per-s") ? &o->host_rate
                  : !strcmp(opt, "--sequences-per-pack") ? &o->per_pack
                  : !strcmp(opt, "--eval-samples")       ? &o->eval_samples
                  : !strcmp(opt, "--eval-every")         ? &o->eval_every
                  : !strcmp(opt, "--memory-reserve")     ? &o->reserve_mb
                                                         : NULL;

    *done = dst != NULL;
    if (!dst)
        return 0;
    if (dst == &o->per_pack)
        return parse_double(v, 1, 64, dst) ? bad(opt, v, "expected a number from 1 to 64") : 0;
    if (parse_double(v, 0, 1e15, dst) ||
        (dst != &o->overhead_s && dst != &o->reserve_mb && *dst <= 0))
        return bad(opt, v,
                   dst == &o->overhead_s   ? "expected a number of seconds >= 0"
                   : dst == &o->reserve_mb ? "expected a number of MB >= 0"
                                           : "expected a number > 0");
    return 0;
}

/* Options that take a word from a list. */
static int word_option(simstep_opts_t *o, const char *opt, const char *v, int *done)
{
    static const struct {
        const char *name, *words, *want;
        size_t off;
    } words[] = {
        {"--schedule", " popart gpipe 1f1b ", "expected popart, gpipe or 1f1b",
         offsetof(simstep_opts_t, schedule)},
        {"--recompute", " none checkpoints stage ", "expected none, checkpoints or stage",
         offsetof(simstep_opts_t, recompute)},
        {"--optimizer", " sgd momentum lars lamb adam ",
         "expected sgd, momentum, lars, lamb or adam", offsetof(simstep_opts_t, optimizer)},
        {"--optimizer-state", " on-chip sharded streaming streaming-sharded ",
         "expected on-chip, sharded, streaming or streaming-sharded",
         offsetof(simstep_opts_t, state)},
        {"--replicated-tensor-sharding", " on off ", "expected on or off",
         offsetof(simstep_opts_t, rts)},
    };
    char key[40];

    *done = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcmp(opt, words[i].name))
            continue;
        *done = 1;
        snprintf(key, sizeof key, " %.30s ", v);
        if (!*v || strchr(v, ' ') || !strstr(words[i].words, key))
            return bad(opt, v, words[i].want);
        *(const char **)((char *)o + words[i].off) = v;
        return 0;
    }
    return 0;
}

static int option(simstep_opts_t *o, const char *opt, const char *v)
{
    int done, rc;

    if (!strcmp(opt, "--model"))
        return (o->model = v, 0);
    if (!strcmp(opt, "--global-batch"))
        return global_batch(o, v);
    if (!strcmp(opt, "--replicas"))
        o->replicas_given = 1;
    if (!strcmp(opt, "--sequence-length")) {
        if (strcmp(v, "128") && strcmp(v, "512"))
            return bad(opt, v, "expected 128 or 512");
        return (o->seq = atoi(v), 0);
    }
    if (!strcmp(opt, "--grad-type")) {
        if (gcl_dtype_parse(v, &o->grad_type) ||
            (o->grad_type != GCL_F16 && o->grad_type != GCL_F32))
            return bad(opt, v, "expected f16 or f32");
        return 0;
    }
    if (!strcmp(opt, "--json"))
        return (o->json = v, 0);
    if (!strcmp(opt, "--topology"))
        return (o->topology = v, 0);
    if (!strcmp(opt, "--ipu")) {
        if (strcasecmp(v, "gc200") && strcasecmp(v, "bow"))
            return bad(opt, v, "expected gc200 or bow");
        return (o->ipu = v, 0);
    }
    if (!strcmp(opt, "--pipeline-splits"))
        return (o->splits = v, 0);
    if (!strcmp(opt, "--att-ffn-placement") || !strcmp(opt, "--layers-per-ipu")) {
        if (o->placement)
            return bad(opt, NULL, "give --att-ffn-placement or --layers-per-ipu, once");
        o->layers_per_ipu = !strcmp(opt, "--layers-per-ipu");
        return (o->placement = v, 0);
    }
    if ((rc = int_option(o, opt, v, &done)) || done)
        return rc;
    if ((rc = real_option(o, opt, v, &done)) || done)
        return rc;
    if ((rc = word_option(o, opt, v, &done)) || done)
        return rc;
    return bad(opt, NULL, "unknown option");
}

/* --ipu: the pod's topology (--topology, GCL_TOPOLOGY under poprun, or the smallest preset
 * that holds --replicas x --stages) with the override ipu=NAME. */
static int with_ipu(simstep_opts_t *o)
{
    long ipus = (o->replicas ? o->replicas : 1) * (o->stages ? o->stages : 1);
    const char *base = o->topology ? o->topology : getenv("GCL_TOPOLOGY");

    if (!o->ipu)
        return 0;
    if (!base || !base[0])
        base = ipus <= 4     ? "M2000"
               : ipus <= 16  ? "POD16"
               : ipus <= 64  ? "POD64"
               : ipus <= 128 ? "POD128"
                             : "POD256";
    if (snprintf(o->topology_ipu, sizeof o->topology_ipu, "%s,ipu=%s", base, o->ipu) >=
        (int)sizeof o->topology_ipu)
        return bad("--topology", NULL, "is too long with --ipu");
    o->topology = o->topology_ipu;
    return 0;
}

/* Options of earlier versions, and what replaces them. */
static int removed(const char *opt)
{
    static const char *const old[] = {"--params", "--flops-per-sample", "--activation-size",
                                      "--compute-efficiency", "--compute-type"};

    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
        if (strcmp(opt, old[i]) == 0) {
            fprintf(stderr,
                    "sim-step: %s was removed: describe the model's layers in a model file "
                    "(--model FILE; sim/README.md)\n",
                    opt);
            return 1;
        }
    }
    return 0;
}

static int is_flag(simstep_opts_t *o, const char *opt)
{
    if (!strcmp(opt, "--sensitivity"))
        return (o->sensitivity = 1);
    if (!strcmp(opt, "--dump-model"))
        return (o->dump_model = 1);
    if (!strcmp(opt, "--optimizer-state-offchip"))
        return (o->offchip = 1);
    if (!strcmp(opt, "--plan"))
        return (o->plan = 1);
    if (!strcmp(opt, "--no-ranges"))
        return (o->no_ranges = 1);
    return 0;
}

static int known(const char *opt)
{
    static const char list[] =
        " --model --sequence-length --micro-batch --gradient-accumulation --global-batch "
        "--stages --replicas --topology --ipu --schedule --pipeline-splits --recompute --optimizer "
        "--optimizer-state --grad-type --host-servers --host-samples-per-s --epochs "
        "--train-samples --run-overhead-s --steps --warmup --json --sequences-per-pack "
        "--att-ffn-placement --layers-per-ipu --replicated-tensor-sharding --eval-samples "
        "--eval-every --max-stages --memory-reserve --top ";
    char key[64];

    snprintf(key, sizeof key, " %.60s ", opt);
    return strstr(list, key) != NULL;
}

int simstep_parse(int argc, char **argv, simstep_opts_t *o)
{
    *o = (simstep_opts_t){
        .seq = 0, .steps = 2, .warmup = 1, .replicas = 1, .host_rate = -1, .grad_type = GCL_F16,
        .reserve_mb = -1, .top = 5};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];

        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (is_flag(o, opt))
            continue;
        if (removed(opt))
            return 2;
        if (!known(opt)) {
            fprintf(stderr, "sim-step: %s '%s' (try --help)\n",
                    strncmp(opt, "-", 1) ? "unexpected argument" : "unknown option", opt);
            return 2;
        }
        if (i + 1 >= argc)
            return bad(opt, NULL, "needs a value");
        if (option(o, opt, argv[++i]))
            return 2;
    }
    if (!o->model)
        return bad("--model", NULL, "needed: resnet50, bert-large or a model file");
    if (o->accum && o->global_batch)
        return bad("--global-batch", NULL,
                   "give --gradient-accumulation or --global-batch, not both");
    if (o->epochs && o->train_samples)
        return bad("--epochs", NULL, "give --epochs or --train-samples, not both");
    if (o->seq && strcmp(o->model, "bert-large"))
        return bad("--sequence-length", NULL, "applies to bert-large only");
    if (o->state && (o->offchip || o->rts))
        return bad("--optimizer-state", NULL,
                   "give it or --optimizer-state-offchip and --replicated-tensor-sharding, not "
                   "both");
    if (o->gb_hi && !o->plan)
        return bad("--global-batch", NULL, "a range LO-HI is for --plan");
    if (o->no_ranges && !o->plan)
        return bad("--no-ranges", NULL, "is for --plan");
    if (o->plan && (!o->topology || !o->global_batch))
        return bad("--plan", NULL, "needs --topology and --global-batch");
    if (o->plan && (o->placement || o->splits || o->stages || o->accum || o->sensitivity))
        return bad("--plan", NULL,
                   "searches the stages, placement, splits and accumulation itself: give none");
    if (o->placement && o->splits)
        return bad(o->layers_per_ipu ? "--layers-per-ipu" : "--att-ffn-placement", NULL,
                   "give a placement or --pipeline-splits, not both");
    if (!o->seq)
        o->seq = 512;
    return with_ipu(o);
}
