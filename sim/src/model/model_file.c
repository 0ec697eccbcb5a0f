/*
 * Model files: any model as a list of layers (format version 1).
 *
 *   # a comment; blank lines are ignored; tokens are separated by spaces or tabs
 *   gcl-model 1                    the format and its version: the first setting, required
 *   name my-cnn                    1-63 of [A-Za-z0-9_.-] (default: the file's base name)
 *   samples_per_unit 1             samples one layer shape describes (packing; 1 or more,
 *                                  up to 3 decimals)                             default 1
 *   input_bytes 150528             host -> IPU bytes per sample                  default 0
 *   host_samples_per_s 40000       samples/s one host server prepares (0: never limits)
 *   dataset_samples 1281167        samples per epoch (for --epochs)              default 0
 *   optimizer momentum             sgd | momentum | adam | lamb | lars           default momentum
 *   recompute none                 none | checkpoints | stage                    default none
 *   optimizer_state on-chip        on-chip | sharded | streaming | streaming-sharded
 *   dtype f16                      f16 | f32: the precision of the layers that follow
 *   layer TYPE key=value ...       one layer; the order of the lines is the model's order
 *
 * Layer keys (whole numbers; see sim/cost/layer.h for what each type computes):
 *   matmul       rows (1) in out bias (0)
 *   conv         h w cin cout kernel stride (1) pad (kernel/2) bias (0)
 *   attention    heads seq head_dim
 *   elementwise  values ops (1) inputs (1)
 *   norm         values channels
 *   pool         h w channels kernel stride (kernel) pad (0)
 *   embedding    tokens vocab dim
 *   loss         rows (1) classes
 * and for every type: name=NAME, dtype=f16|f32, input_grad=0|1 (1), checkpoint=0|1 (0),
 * tied=0|1 (0), part=none|embedding|attention|ffn|head (none: what a placement by attention and
 * feed-forward sublayers counts; sim/cost/layer.h). Settings other than layer may appear once each.
 *
 * Any bad line stops the load with one message "FILE:LINE: ...": an unsupported layer type
 * names the type and lists the supported ones; a malformed layer names its type and the key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/model/model_file.h"
#include "base/text.h"

#define LINE_MAX_CHARS 1023
#define MAX_TOKENS     32

struct mparser {
    const char *path;
    int line, have_version, seen[10];
    sim_precision_t prec;
    sim_model_t *m;
    char *err;
    size_t errlen;
};

#define MERR(p, ...)                                                                               \
    do {                                                                                           \
        char msg_[400];                                                                            \
        snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                                 \
        sim_errf((p)->err, (p)->errlen, "%s:%d: %s", (p)->path, (p)->line, msg_);                  \
    } while (0)

/* A whole number of at most 15 digits, no sign. */
static int parse_u64(const char *s, uint64_t *out)
{
    size_t n = strlen(s);
    uint64_t v = 0;

    if (n == 0 || n > 15 || strspn(s, "0123456789") != n)
        return -1;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    *out = v;
    return 0;
}

/* A decimal of at most 9 digits before and 3 after the point, in thousandths. */
static int parse_milli(const char *s, uint64_t *out)
{
    const char *dot = strchr(s, '.');
    size_t whole = dot ? (size_t)(dot - s) : strlen(s), frac = dot ? strlen(dot + 1) : 0;
    uint64_t v = 0;

    if (whole == 0 || whole > 9 || strspn(s, "0123456789") != whole || frac > 3 ||
        (dot && (frac == 0 || strspn(dot + 1, "0123456789") != frac)))
        return -1;
    for (size_t i = 0; i < whole; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    for (size_t i = 0; i < 3; i++)
        v = v * 10 + (i < frac ? (uint64_t)(dot[1 + i] - '0') : 0);
    *out = v;
    return 0;
}

static int parse_prec(const char *s, sim_precision_t *out)
{
    if (strcmp(s, "f16") == 0 || strcmp(s, "bf16") == 0)
        *out = SIM_PREC_F16;
    else if (strcmp(s, "f32") == 0)
        *out = SIM_PREC_F32;
    else
        return -1;
    return 0;
}

/* One "key=value" of a layer of type T; which field each key sets, per type. */
struct lkey {
    const char *key;
    size_t off;
    int wide; /* 2: uint64_t, 1: uint32_t, 0: uint8_t flag */
};
#define K64(k, f)                                                                                  \
    {                                                                                              \
        k, offsetof(sim_layer_t, f), 2                                                             \
    }
#define K32(k, f)                                                                                  \
    {                                                                                              \
        k, offsetof(sim_layer_t, f), 1                                                             \
    }
#define K8(k, f)                                                                                   \
    {                                                                                              \
        k, offsetof(sim_layer_t, f), 0                                                             \
    }

static const struct lkey type_keys[SIM_LAYER_COUNT][9] = {
    [SIM_LAYER_MATMUL] = {K64("rows", rows), K64("in", in), K64("out", out), K8("bias", bias)},
    [SIM_LAYER_CONV] = {K32("h", h), K32("w", w), K32("cin", cin), K32("cout", cout),
                        K32("kernel", kernel), K32("stride", stride), K32("pad", pad),
                        K8("bias", bias)},
    [SIM_LAYER_ATTENTION] = {K32("heads", heads), K32("seq", seq), K32("head_dim", head_dim)},
    [SIM_LAYER_ELEMENTWISE] = {K64("values", values), K32("ops", ops), K32("inputs", inputs)},
    [SIM_LAYER_NORM] = {K64("values", values), K32("channels", channels)},
    [SIM_LAYER_POOL] = {K32("h", h), K32("w", w), K32("channels", cin), K32("kernel", kernel),
                        K32("stride", stride), K32("pad", pad)},
    [SIM_LAYER_EMBEDDING] = {K64("tokens", rows), K64("vocab", in), K64("dim", out)},
    [SIM_LAYER_LOSS] = {K64("rows", rows), K64("classes", out)},
};

static const struct lkey common_keys[] = {
    K8("input_grad", input_grad), K8("checkpoint", checkpoint), K8("tied", tied), {NULL, 0, 0}};

static const struct lkey *find_key(const struct lkey *list, const char *k, size_t n)
{
    for (; list->key; list++)
        if (strlen(list->key) == n && strncmp(list->key, k, n) == 0)
            return list;
    return NULL;
}

/* "h, w, cin, ..." for an error message. */
static void key_list(sim_layer_type_t t, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
    for (const struct lkey *k = type_keys[t]; k->key && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s, ", k->key);
    if (at < len)
        snprintf(buf + at, len - at, "name, dtype, input_grad, checkpoint, tied, part");
}

static int set_value(struct mparser *p, sim_layer_t *l, const struct lkey *k, const char *v)
{
    uint64_t x;
    char *at = (char *)l + k->off;
    uint64_t max = k->wide == 2 ? (UINT64_C(1) << 40) : k->wide == 1 ? UINT32_MAX : 1;

    if (parse_u64(v, &x) != 0 || x > max) {
        MERR(p, "%s: %s must be a whole number from 0 to %llu (got '%.40s')",
             sim_layer_type_name(l->type), k->key, (unsigned long long)max, v);
        return -EINVAL;
    }
    if (k->wide == 2)
        *(uint64_t *)at = x;
    else if (k->wide == 1)
        *(uint32_t *)at = (uint32_t)x;
    else
        *(uint8_t *)at = (uint8_t)x;
    return 0;
}

static int layer_token(struct mparser *p, sim_layer_t *l, const char *tok, int *have_pad,
                       int *have_stride)
{
    const char *eq = strchr(tok, '=');
    const struct lkey *k;
    size_t n = eq ? (size_t)(eq - tok) : 0;
    const char *tn = sim_layer_type_name(l->type);
    char keys[256];

    if (eq == NULL || n == 0 || eq[1] == '\0') {
        MERR(p, "%s: '%.40s' is not key=value", tn, tok);
        return -EINVAL;
    }
    if (n == 4 && strncmp(tok, "name", 4) == 0) {
        if (strlen(eq + 1) >= SIM_LAYER_NAME_MAX) {
            MERR(p, "%s: name longer than %d characters", tn, SIM_LAYER_NAME_MAX - 1);
            return -EINVAL;
        }
        memset(l->name, 0, sizeof(l->name));
        sim_strlcpy(l->name, eq + 1, sizeof(l->name));
        return 0;
    }
    if (n == 4 && strncmp(tok, "part", 4) == 0) {
        int part = sim_part_parse(eq + 1);

        if (part >= 0)
            return (l->part = (uint8_t)part, 0);
        MERR(p, "%s: part must be none, embedding, attention, ffn or head (got '%.20s')", tn,
             eq + 1);
        return -EINVAL;
    }
    if (n == 5 && strncmp(tok, "dtype", 5) == 0) {
        if (parse_prec(eq + 1, &l->prec) == 0)
            return 0;
        MERR(p, "%s: dtype must be f16 or f32 (got '%.20s')", tn, eq + 1);
        return -EINVAL;
    }
    k = find_key(type_keys[l->type], tok, n);
    if (k == NULL)
        k = find_key(common_keys, tok, n);
    if (k == NULL) {
        key_list(l->type, keys, sizeof(keys));
        MERR(p, "%s: unknown key '%.*s' (%s takes %s)", tn, (int)(n < 40 ? n : 40), tok, tn, keys);
        return -EINVAL;
    }
    *have_pad |= strcmp(k->key, "pad") == 0;
    *have_stride |= strcmp(k->key, "stride") == 0;
    return set_value(p, l, k, eq + 1);
}

static int parse_layer(struct mparser *p, char **tok, int n)
{
    sim_layer_t l;
    int type, have_pad = 0, have_stride = 0;
    char why[256];

    if (n < 2) {
        MERR(p, "layer needs a type (supported types: %s)", sim_layer_type_list());
        return -EINVAL;
    }
    type = sim_layer_type_parse(tok[1]);
    if (type < 0) {
        MERR(p, "unsupported layer type '%.40s' (supported types: %s)", tok[1],
             sim_layer_type_list());
        return -EINVAL;
    }
    sim_layer_init(&l, (sim_layer_type_t)type, NULL);
    snprintf(l.name, sizeof(l.name), "%s%zu", tok[1], p->m->num_layers);
    l.prec = p->prec;
    for (int i = 2; i < n; i++)
        if (layer_token(p, &l, tok[i], &have_pad, &have_stride) != 0)
            return -EINVAL;
    if (type == SIM_LAYER_CONV && !have_pad)
        l.pad = l.kernel / 2;
    if (type == SIM_LAYER_POOL && !have_stride)
        l.stride = l.kernel;
    if (sim_layer_check(&l, why, sizeof(why)) != 0) {
        MERR(p, "%s", why);
        return -EINVAL;
    }
    if (sim_model_add(p->m, &l) != 0) {
        MERR(p, "more than %d layers, or out of memory", SIM_MODEL_MAX_LAYERS);
        return -EINVAL;
    }
    return 0;
}

enum { S_NAME, S_SPU, S_INPUT, S_HOST, S_DATASET, S_OPTIM, S_RECOMPUTE, S_STATE, S_DTYPE };
static const char *const settings[] = {"name",
                                       "samples_per_unit",
                                       "input_bytes",
                                       "host_samples_per_s",
                                       "dataset_samples",
                                       "optimizer",
                                       "recompute",
                                       "optimizer_state",
                                       "dtype"};

static int parse_word(struct mparser *p, int which, const char *v)
{
    sim_model_t *m = p->m;
    int x;

    switch (which) {
    case S_OPTIM:
        if ((x = sim_optimizer_parse(v)) >= 0)
            return (m->optimizer = (sim_optimizer_t)x, 0);
        MERR(p, "optimizer must be sgd, momentum, adam, lamb or lars (got '%.40s')", v);
        return -EINVAL;
    case S_RECOMPUTE:
        if ((x = sim_recompute_parse(v)) >= 0)
            return (m->recompute = (sim_recompute_t)x, 0);
        MERR(p, "recompute must be none, checkpoints or stage (got '%.40s')", v);
        return -EINVAL;
    case S_STATE:
        if ((x = sim_state_place_parse(v)) >= 0)
            return (m->state = (sim_state_place_t)x, 0);
        MERR(p,
             "optimizer_state must be on-chip, sharded, streaming or streaming-sharded (got "
             "'%.40s')",
             v);
        return -EINVAL;
    case S_DTYPE:
        if (parse_prec(v, &p->prec) == 0)
            return 0;
        MERR(p, "dtype must be f16 or f32 (got '%.40s')", v);
        return -EINVAL;
    default:
        if (strlen(v) < SIM_MODEL_NAME_MAX &&
            strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
                strlen(v))
            return (sim_strlcpy(m->name, v, sizeof(m->name)), 0);
        MERR(p, "name must be 1..%d characters of A-Z a-z 0-9 _ . - (got '%.40s')",
             SIM_MODEL_NAME_MAX - 1, v);
        return -EINVAL;
    }
}

static int parse_setting(struct mparser *p, int which, const char *v)
{
    uint64_t x;
    static const uint64_t max[] = {0, 64, UINT64_C(1) << 32, UINT64_C(1) << 40, UINT64_C(1) << 48};

    if (p->seen[which]) {
        MERR(p, "%s is set twice (first on line %d)", settings[which], p->seen[which]);
        return -EINVAL;
    }
    p->seen[which] = p->line;
    if (which == S_NAME || which >= S_OPTIM)
        return parse_word(p, which, v);
    if (which == S_SPU) {
        if (parse_milli(v, &x) != 0 || x < 1000 || x > 64000) {
            MERR(p, "samples_per_unit must be a number from 1 to 64, up to 3 decimals (got "
                    "'%.40s')",
                 v);
            return -EINVAL;
        }
        p->m->samples_per_unit = (double)x / 1000.0;
        return 0;
    }
    if (parse_u64(v, &x) != 0 || x > max[which]) {
        MERR(p, "%s must be a whole number from 0 to %llu (got '%.40s')", settings[which],
             (unsigned long long)max[which], v);
        return -EINVAL;
    }
    if (which == S_INPUT)
        p->m->input_bytes = x;
    else if (which == S_HOST)
        p->m->host_samples_per_s = x;
    else
        p->m->dataset_samples = x;
    return 0;
}

static int parse_version(struct mparser *p, char **tok, int n)
{
    if (n != 2 || strcmp(tok[1], "1") != 0) {
        MERR(p, "unsupported format version '%.20s' (this build reads 'gcl-model 1')",
             n > 1 ? tok[1] : "");
        return -EINVAL;
    }
    p->have_version = 1;
    return 0;
}

static int parse_line(struct mparser *p, char *line)
{
    char *tok[MAX_TOKENS + 1];
    int n = 0;
    char *hash = strchr(line, '#');

    if (hash)
        *hash = '\0';
    for (char *s = line + strspn(line, " \t\r"); *s && n <= MAX_TOKENS; s += strspn(s, " \t\r")) {
        tok[n++] = s;
        s += strcspn(s, " \t\r");
        if (*s)
            *s++ = '\0';
    }
    if (n == 0)
        return 0;
    if (n > MAX_TOKENS) {
        MERR(p, "more than %d tokens", MAX_TOKENS);
        return -EINVAL;
    }
    if (!p->have_version) {
        if (strcmp(tok[0], "gcl-model") == 0)
            return parse_version(p, tok, n);
        MERR(p, "a model file starts with 'gcl-model 1' (got '%.40s')", tok[0]);
        return -EINVAL;
    }
    if (strcmp(tok[0], "layer") == 0)
        return parse_layer(p, tok, n);
    for (int i = 0; i < (int)(sizeof(settings) / sizeof(settings[0])); i++) {
        if (strcmp(tok[0], settings[i]) != 0)
            continue;
        if (n != 2) {
            MERR(p, "%s takes one value (got %d)", settings[i], n - 1);
            return -EINVAL;
        }
        return parse_setting(p, i, tok[1]);
    }
    MERR(p,
         "unknown setting '%.40s' (settings: gcl-model, name, samples_per_unit, input_bytes, "
         "host_samples_per_s, dataset_samples, optimizer, recompute, optimizer_state, dtype, "
         "layer)",
         tok[0]);
    return -EINVAL;
}

static int parse_file(struct mparser *p, FILE *f)
{
    char buf[LINE_MAX_CHARS + 1];
    int rc;

    for (;;) {
        char why[64];

        p->line++;
        rc = sim_read_line(f, buf, LINE_MAX_CHARS, why, sizeof(why));
        if (rc < 0)
            MERR(p, "%s", why);
        if (rc <= 0)
            return rc;
        rc = parse_line(p, buf);
        if (rc != 0)
            return rc;
    }
}

int sim_model_load(const char *path, sim_model_t *m, char *err, size_t errlen)
{
    struct mparser p = {.path = path, .prec = SIM_PREC_F16, .m = m, .err = err, .errlen = errlen};
    char name[SIM_MODEL_NAME_MAX];
    FILE *f;
    int rc;

    sim_base_name(path ? path : "", "model", name, sizeof(name));
    sim_model_init(m, name);
    f = sim_open_text(path, "model file", &rc, err, errlen);
    if (f == NULL)
        return rc;
    rc = parse_file(&p, f);
    fclose(f);
    if (rc == 0 && m->num_layers == 0) {
        sim_errf(err, errlen, "%s:%d: the model has no layer lines ('layer TYPE key=value ...')",
                 path, p.line - 1);
        rc = -EINVAL;
    }
    if (rc != 0)
        sim_model_free(m);
    return rc;
}

static int write_layer(const sim_layer_t *l, sim_precision_t *prec, FILE *f)
{
    if (l->prec != *prec) {
        fprintf(f, "dtype %s\n", l->prec == SIM_PREC_F32 ? "f32" : "f16");
        *prec = l->prec;
    }
    fprintf(f, "layer %s name=%s", sim_layer_type_name(l->type), l->name);
    for (const struct lkey *k = type_keys[l->type]; k->key; k++) {
        const char *at = (const char *)l + k->off;
        uint64_t v = k->wide == 2   ? *(const uint64_t *)at
                     : k->wide == 1 ? *(const uint32_t *)at
                                    : *(const uint8_t *)at;

        fprintf(f, " %s=%llu", k->key, (unsigned long long)v);
    }
    for (const struct lkey *k = common_keys; k->key; k++) {
        uint8_t v = *((const uint8_t *)l + k->off);

        if (v != (strcmp(k->key, "input_grad") == 0))
            fprintf(f, " %s=%u", k->key, v);
    }
    if (l->part != SIM_PART_NONE)
        fprintf(f, " part=%s", sim_part_name((sim_part_t)l->part));
    return fputc('\n', f) == EOF ? -EIO : 0;
}

int sim_model_write(const sim_model_t *m, FILE *f)
{
    sim_precision_t prec = SIM_PREC_F16;

    fprintf(f, "gcl-model 1\nname %s\nsamples_per_unit %.3f\ninput_bytes %llu\n", m->name,
            m->samples_per_unit, (unsigned long long)m->input_bytes);
    fprintf(f, "host_samples_per_s %llu\ndataset_samples %llu\n",
            (unsigned long long)m->host_samples_per_s, (unsigned long long)m->dataset_samples);
    fprintf(f, "optimizer %s\nrecompute %s\noptimizer_state %s\n", sim_optimizer_name(m->optimizer),
            sim_recompute_name(m->recompute), sim_state_place_name(m->state));
    for (size_t i = 0; i < m->num_layers; i++)
        if (write_layer(&m->layers[i], &prec, f) != 0)
            return -EIO;
    return ferror(f) ? -EIO : 0;
}
