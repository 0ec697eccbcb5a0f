/* The training program's options; see usage_text for what each means. */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage_text =
    "usage: train [options]\n"
    "  Trains an MLP or a CNN on Fashion-MNIST, data-parallel over the replicas of the job and\n"
    "  pipelined over the IPUs of each replica, and reports test accuracy, real throughput and\n"
    "  the simulated step time on the pod. Run it under poprun:\n"
    "    poprun --num-replicas 16 --num-instances 4 train --model cnn\n"
    "    poprun --num-replicas 2 --ipus-per-replica 2 train --pipeline-schedule gpipe\n"
    "  or alone, with --replicas and --ipus-per-replica. The MPI baseline (the same training,\n"
    "  gradients reduced with MPI_Allreduce, one replica per rank, nothing simulated):\n"
    "    mpirun -np 16 train --backend mpi\n"
    "data and model:\n"
    "  --data DIR                 IDX files of Fashion-MNIST, gzip'd or not\n"
    "                             (default /usr/share/datasets/fashion-mnist)\n"
    "  --train-samples N          use the first N training samples (default all)\n"
    "  --test-samples N           use the first N test samples (default all)\n"
    "  --model M                  mlp (default), cnn, or a model file: a CNN's layers as\n"
    "                             --layers lists them, one or more a line, # comments\n"
    "  --hidden LIST              the MLP's hidden layer widths (default 256,128:\n"
    "                             784-256-128-10)\n"
    "  --layers LIST              the CNN's layers before its dense layer to the classes\n"
    "                             (implies --model cnn; default\n"
    "                             conv:16:3,pool:2,conv:32:3,pool:2,dense:128): conv:C:K[:S[:P]]\n"
    "                             a KxK convolution to C channels, stride S (1), padding P\n"
    "                             (K/2), with a ReLU; pool:K[:S[:P]] KxK max pooling, stride S\n"
    "                             (K), padding P (0); dense:N N outputs, with a ReLU\n"
    "training:\n"
    "  --epochs N                 passes over the training data (default 30; cnn 20)\n"
    "  --max-steps N              stop after N steps; the learning-rate schedule still spans\n"
    "                             --epochs (default: no limit)\n"
    "  --batch-size N             samples per micro-batch and replica (default 32)\n"
    "  --gradient-accumulation N  micro-batches per step and replica (default 1; 2 x the\n"
    "                             stages when pipelined; at least the stages)\n"
    "  --optimizer sgd|adam       (default sgd, with momentum)\n"
    "  --lr X                     peak learning rate (default 0.05 for sgd, cnn 0.1; 0.001\n"
    "                             for adam)\n"
    "  --lr-schedule S            constant or cosine (default cosine, to 0 at the end)\n"
    "  --warmup-steps N           linear warm-up (default 0; cnn one epoch's steps)\n"
    "  --momentum X               sgd momentum (default 0.9)\n"
    "  --weight-decay X           on the weights, not biases: L2 for sgd, decoupled (AdamW)\n"
    "                             for adam (default 0; cnn 0.0005)\n"
    "  --seed N                   initial weights, sample order and flips (default 1)\n"
    "  --augment none|flip        flip: each training image mirrored left to right in an\n"
    "                             epoch with probability 1/2, from the seed (default none;\n"
    "                             cnn flip)\n"
    "  --grad-dtype f32|f16       type of the gradient all-reduce (default f32)\n"
    "  --grad-scale X             f16 only: gradients are scaled by X before the cast, so small\n"
    "                             ones do not flush to zero (default 256)\n"
    "distribution:\n"
    "  --replicas N               replicas without poprun (default 1; under poprun it must match\n"
    "                             --num-replicas)\n"
    "  --ipus-per-replica K       pipeline stages per replica without poprun (default 1; under\n"
    "                             poprun it must match poprun's --ipus-per-replica)\n"
    "  --pipeline-schedule S      gpipe or 1f1b (default 1f1b)\n"
    "  --backend gcl|mpi          gcl: libgcl over simulated IPUs (default); mpi: MPI_Allreduce\n"
    "                             over the ranks of mpirun, one replica each, nothing simulated\n"
    "checkpoints:\n"
    "  --checkpoint DIR           save checkpoints in DIR (created, mode 0700)\n"
    "  --checkpoint-every N       steps between checkpoints (default: one per epoch)\n"
    "  --keep-checkpoints N       newest checkpoints kept (default 3)\n"
    "  --resume                   continue from the newest valid checkpoint of DIR\n"
    "output:\n"
    "  --json FILE                write the results as JSON\n"
    "  --step-log FILE            write every step's real time (and time in the gradient\n"
    "                             all-reduce, and simulated time) on every replica as CSV\n"
    "  --save-weights FILE        write the final state (checkpoint format) to FILE\n"
    "  --log-every N              steps between progress reports (default: 10 lines per epoch,\n"
    "                             or 50 moves of the bar)\n"
    "  --progress M               auto, bar, plain or none (default auto: a bar on a terminal,\n"
    "                             plain lines otherwise; none: only the banner and summary)\n"
    "testing:\n"
    "  --fault KIND:N             kill-after-step:N, kill-mid-checkpoint:N,\n"
    "                             kill-before-rename:N (instance 0 kills itself at step N;\n"
    "                             kill-after-step:N@I+J: instances I and J, as poprun\n"
    "                             planned them; not again after a --max-restarts restart),\n"
    "                             diverge:R (replica R's weights differ after step 1),\n"
    "                             hold-after-step:N (every replica waits after step N\n"
    "                             until the file $TRAIN_HOLD_FILE exists, 10 min at most)\n"
    "  -h, --help                 this text\n";

typedef enum { A_INT, A_LONG, A_DOUBLE, A_STR, A_SPECIAL } arg_kind_t;

typedef struct {
    const char *name;
    arg_kind_t kind;
    size_t off;
    double lo, hi;
} arg_def_t;

#define O(field) offsetof(train_opts_t, field)
static const arg_def_t defs[] = {
    {"--data", A_STR, O(data_dir), 0, 0},
    {"--train-samples", A_LONG, O(train_samples), 1, 1e8},
    {"--test-samples", A_LONG, O(test_samples), 1, 1e8},
    {"--epochs", A_INT, O(epochs), 1, 1e6},
    {"--max-steps", A_LONG, O(max_steps), 1, 1e12},
    {"--batch-size", A_INT, O(batch_size), 1, 1 << 20},
    {"--gradient-accumulation", A_INT, O(accumulation), 1, 1 << 16},
    {"--lr", A_DOUBLE, O(optim.lr), 1e-12, 1e3},
    {"--warmup-steps", A_LONG, O(optim.warmup_steps), 0, 1e12},
    {"--momentum", A_DOUBLE, O(optim.momentum), 0, 0.999999},
    {"--weight-decay", A_DOUBLE, O(optim.weight_decay), 0, 1},
    {"--grad-scale", A_DOUBLE, O(grad_scale), 1e-6, 65504},
    {"--replicas", A_INT, O(replicas), 1, 4096},
    {"--ipus-per-replica", A_INT, O(ipus_per_replica), 1, MODEL_MAX_LAYERS},
    {"--checkpoint", A_STR, O(checkpoint_dir), 0, 0},
    {"--checkpoint-every", A_LONG, O(checkpoint_every), 1, 1e12},
    {"--keep-checkpoints", A_INT, O(keep_checkpoints), 1, 1000},
    {"--json", A_STR, O(json_path), 0, 0},
    {"--save-weights", A_STR, O(save_weights), 0, 0},
    {"--step-log", A_STR, O(step_log), 0, 0},
    {"--log-every", A_LONG, O(log_every), 1, 1e12},
    {"--hidden", A_SPECIAL, 0, 0, 0},
    {"--model", A_SPECIAL, 0, 0, 0},
    {"--layers", A_SPECIAL, 0, 0, 0},
    {"--augment", A_SPECIAL, 0, 0, 0},
    {"--optimizer", A_SPECIAL, 0, 0, 0},
    {"--lr-schedule", A_SPECIAL, 0, 0, 0},
    {"--seed", A_SPECIAL, 0, 0, 0},
    {"--grad-dtype", A_SPECIAL, 0, 0, 0},
    {"--pipeline-schedule", A_SPECIAL, 0, 0, 0},
    {"--progress", A_SPECIAL, 0, 0, 0},
    {"--backend", A_SPECIAL, 0, 0, 0},
    {"--fault", A_SPECIAL, 0, 0, 0},
};
#undef O

static int bad(const char *opt, const char *val, const char *expected)
{
    fprintf(stderr, "train: %s '%s': expected %s\n", opt, val, expected);
    return 2;
}

static int parse_number(const arg_def_t *d, const char *val, train_opts_t *o)
{
    char *end, want[96];
    errno = 0;
    double x = strtod(val, &end);
    int integral = d->kind != A_DOUBLE;
    if (integral)
        snprintf(want, sizeof want, "an integer from %.0f to %.0f", d->lo, d->hi);
    else
        snprintf(want, sizeof want, "a number from %g to %g", d->lo, d->hi);
    if (!*val || *end || errno || !isfinite(x) || x < d->lo || x > d->hi ||
        (integral && x != floor(x)))
        return bad(d->name, val, want);
    char *p = (char *)o + d->off;
    if (d->kind == A_INT)
        *(int *)p = (int)x;
    else if (d->kind == A_LONG)
        *(long *)p = (long)x;
    else
        *(double *)p = x;
    return 0;
}

static int parse_hidden(const char *val, train_opts_t *o)
{
    char buf[512];
    size_t len = strlen(val);
    if (len >= sizeof buf || !*val || val[0] == ',' || val[len - 1] == ',' || strstr(val, ",,"))
        return bad("--hidden", val, "widths separated by commas, e.g. 256,128");
    strcpy(buf, val);
    o->nhidden = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        long w = strtol(t, &end, 10);
        if (*end || errno || w < 1 || w > (1 << 20) || o->nhidden == MODEL_MAX_LAYERS - 1)
            return bad("--hidden", val, "at most 15 widths from 1 to 1048576, e.g. 256,128");
        o->hidden[o->nhidden++] = (int)w;
    }
    return 0;
}

/* "1+3": the instances of kill-after-step:N@1+3, as bits (at most instance 63). */
static int parse_instances(const char *s, unsigned long long *mask)
{
    *mask = 0;
    while (*s) {
        char *end;
        errno = 0;
        long i = strtol(s, &end, 10);
        if (end == s || errno || i < 0 || i > 63 || (*end && *end != '+'))
            return -1;
        *mask |= 1ull << i;
        s = *end ? end + 1 : end;
    }
    return *mask ? 0 : -1;
}

static int parse_fault(const char *val, train_opts_t *o)
{
    static const struct {
        const char *name;
        fault_t fault;
    } kinds[] = {{"kill-after-step", FAULT_KILL_AFTER_STEP},
                 {"kill-mid-checkpoint", FAULT_KILL_MID_CHECKPOINT},
                 {"kill-before-rename", FAULT_KILL_BEFORE_RENAME},
                 {"diverge", FAULT_DIVERGE},
                 {"hold-after-step", FAULT_HOLD_AFTER_STEP}};
    const char *colon = strchr(val, ':');
    for (size_t i = 0; colon && i < sizeof kinds / sizeof kinds[0]; i++) {
        char *end;
        errno = 0;
        long n = strtol(colon + 1, &end, 10);
        if (kinds[i].fault == FAULT_KILL_AFTER_STEP && *end == '@' &&
            parse_instances(end + 1, &o->fault_instances) == 0)
            end += strlen(end);
        if (strlen(kinds[i].name) == (size_t)(colon - val) &&
            !strncmp(val, kinds[i].name, (size_t)(colon - val)) && colon[1] && !*end && !errno &&
            n >= 0) {
            o->fault = kinds[i].fault;
            o->fault_arg = n;
            return 0;
        }
    }
    return bad("--fault", val,
               "kill-after-step:N[@I[+J...]], kill-mid-checkpoint:N, kill-before-rename:N, "
               "diverge:R or hold-after-step:N");
}

/* --model NAME or a model file: the file's text is the CNN's layer list. */
static int parse_model(const char *val, train_opts_t *o)
{
    static char text[65536];
    static char source[4200];
    o->model = model_find(val);
    if (o->model) {
        o->model_opts.layers = NULL;
        return 0;
    }
    FILE *f = fopen(val, "r");
    if (!f) {
        char want[4300];
        snprintf(want, sizeof want, "mlp, cnn or a model file (%s)", strerror(errno));
        return bad("--model", val, want);
    }
    size_t n = fread(text, 1, sizeof text, f);
    int err = ferror(f);
    fclose(f);
    if (err || n == sizeof text || memchr(text, '\0', n))
        return bad("--model", val, "a model file: text of less than 64 KiB");
    text[n] = '\0';
    snprintf(source, sizeof source, "model file %s", val);
    o->model = &model_cnn;
    o->model_opts.layers = text;
    o->model_opts.source = source;
    return 0;
}

static int parse_special(const char *opt, const char *val, train_opts_t *o)
{
    if (!strcmp(opt, "--hidden"))
        return parse_hidden(val, o);
    if (!strcmp(opt, "--model"))
        return parse_model(val, o);
    if (!strcmp(opt, "--augment")) {
        if (strcmp(val, "none") && strcmp(val, "flip"))
            return bad(opt, val, "none or flip");
        o->augment = !strcmp(val, "flip");
        return 0;
    }
    if (!strcmp(opt, "--layers")) {
        o->model_opts.layers = val;
        o->model_opts.source = "--layers";
        return 0;
    }
    if (!strcmp(opt, "--fault"))
        return parse_fault(val, o);
    if (!strcmp(opt, "--optimizer")) {
        if (strcmp(val, "sgd") && strcmp(val, "adam"))
            return bad(opt, val, "sgd or adam");
        o->optim.kind = !strcmp(val, "adam") ? OPTIM_ADAM : OPTIM_SGD;
    } else if (!strcmp(opt, "--lr-schedule")) {
        if (strcmp(val, "constant") && strcmp(val, "cosine"))
            return bad(opt, val, "constant or cosine");
        o->optim.schedule = !strcmp(val, "cosine") ? LR_COSINE : LR_CONSTANT;
    } else if (!strcmp(opt, "--seed")) {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(val, &end, 10);
        if (!*val || *end || errno || *val == '-')
            return bad(opt, val, "an integer from 0 to 2^64-1");
        o->seed = s;
    } else if (!strcmp(opt, "--grad-dtype")) {
        if (gcl_dtype_parse(val, &o->grad_dtype) ||
            (o->grad_dtype != GCL_F32 && o->grad_dtype != GCL_F16))
            return bad(opt, val, "f32 or f16");
    } else if (!strcmp(opt, "--pipeline-schedule")) {
        if (pipe_schedule_parse(val, &o->schedule))
            return bad(opt, val, "gpipe or 1f1b");
    } else if (!strcmp(opt, "--backend")) {
        if (strcmp(val, "gcl") && strcmp(val, "mpi"))
            return bad(opt, val, "gcl or mpi");
        o->backend = !strcmp(val, "mpi") ? BACKEND_MPI : BACKEND_GCL;
    } else if (!strcmp(opt, "--progress")) {
        static const char *const modes[] = {"auto", "bar", "plain", "none"};
        int i = 0;
        while (i < 4 && strcmp(val, modes[i]))
            i++;
        if (i == 4)
            return bad(opt, val, "auto, bar, plain or none");
        o->progress = (progress_t)i;
    }
    return 0;
}

static void set_defaults(train_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->data_dir = "/usr/share/datasets/fashion-mnist";
    o->model = &model_mlp;
    o->hidden[0] = 256;
    o->hidden[1] = 128;
    o->nhidden = 2;
    o->epochs = 30;
    o->batch_size = 32;
    o->optim.kind = OPTIM_SGD;
    o->optim.momentum = 0.9;
    o->optim.beta1 = 0.9;
    o->optim.beta2 = 0.999;
    o->optim.eps = 1e-8;
    o->optim.schedule = LR_COSINE;
    o->seed = 1;
    o->grad_dtype = GCL_F32;
    o->grad_scale = 256;
    o->schedule = PIPE_1F1B;
    o->keep_checkpoints = 3;
}

/* Splits "--name=value"; returns the definition of NAME or NULL. */
static const arg_def_t *find_def(const char *arg, char *name, size_t len, const char **val)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    snprintf(name, len, "%.*s", (int)n, arg);
    *val = eq ? eq + 1 : NULL;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (!strcmp(defs[i].name, name))
            return &defs[i];
    return NULL;
}

static int apply(const arg_def_t *d, const char *val, train_opts_t *o)
{
    if (d->kind == A_SPECIAL)
        return parse_special(d->name, val, o);
    if (d->kind != A_STR)
        return parse_number(d, val, o);
    if (!*val)
        return bad(d->name, val, "a path");
    *(const char **)((char *)o + d->off) = val;
    return 0;
}

/* The model's options agree with each other and name known layers (their shapes are checked
 * against the data's images later, job_model). Returns 0, or 2 after one line. */
static int check_model(train_opts_t *o, int given_model, int given_hidden, int given_layers)
{
    const char *file = o->model_opts.source && strcmp(o->model_opts.source, "--layers")
                           ? o->model_opts.source
                           : NULL;
    if (given_layers && file) {
        fprintf(stderr, "train: --layers and a %s both name the CNN's layers: give one\n", file);
        return 2;
    }
    if (given_layers && given_model && o->model != &model_cnn) {
        fprintf(stderr,
                "train: --layers lists a CNN's layers, but --model is %s (its widths are "
                "--hidden)\n",
                o->model->name);
        return 2;
    }
    if (given_layers)
        o->model = &model_cnn;
    if (given_hidden && o->model != &model_mlp) {
        fprintf(stderr, "train: --hidden sets the MLP's widths, but the model is a CNN (its "
                        "layers are --layers or a model file)\n");
        return 2;
    }
    o->model_opts.hidden = o->hidden;
    o->model_opts.nhidden = o->nhidden;
    model_spec_t spec;
    char err[512];
    if (o->model->describe(&o->model_opts, 1, 28, 28, 10, &spec, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return 2;
    }
    return 0;
}

int train_parse_args(int argc, char **argv, train_opts_t *o)
{
    set_defaults(o);
    int rc;
    int augment_given = 0, warmup_given = 0, decay_given = 0;
    int lr_given = 0, epochs_given = 0, model_given = 0, hidden_given = 0, layers_given = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            return 1;
        }
        if (!strcmp(argv[i], "--resume")) {
            o->resume = 1;
            continue;
        }
        char name[64];
        const char *val;
        const arg_def_t *d = find_def(argv[i], name, sizeof name, &val);
        if (!d) {
            fprintf(stderr, "train: unknown option '%s' (try --help)\n", argv[i]);
            return 2;
        }
        if (!val && i + 1 >= argc) {
            fprintf(stderr, "train: %s needs a value (try --help)\n", name);
            return 2;
        }
        if (!val)
            val = argv[++i];
        lr_given |= !strcmp(d->name, "--lr");
        epochs_given |= !strcmp(d->name, "--epochs");
        augment_given |= !strcmp(d->name, "--augment");
        warmup_given |= !strcmp(d->name, "--warmup-steps");
        decay_given |= !strcmp(d->name, "--weight-decay");
        model_given |= !strcmp(d->name, "--model");
        hidden_given |= !strcmp(d->name, "--hidden");
        layers_given |= !strcmp(d->name, "--layers");
        rc = apply(d, val, o);
        if (rc)
            return rc;
    }
    rc = check_model(o, model_given, hidden_given, layers_given);
    if (rc)
        return rc;
    if (!lr_given)
        o->optim.lr = o->optim.kind == OPTIM_ADAM ? o->model->adam_lr : o->model->sgd_lr;
    if (!epochs_given)
        o->epochs = o->model->epochs;
    if (!augment_given)
        o->augment = o->model->augment;
    if (!decay_given)
        o->optim.weight_decay = o->model->weight_decay;
    if (!warmup_given) /* the model's, in epochs: job_init makes it steps */
        o->optim.warmup_steps = -1;
    if (o->resume && !o->checkpoint_dir) {
        fprintf(stderr, "train: --resume needs --checkpoint DIR\n");
        return 2;
    }
    return 0;
}
