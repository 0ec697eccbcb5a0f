/*
 * Layer types and the counts that follow from a layer's shape: parameters, multiply-adds and
 * activation sizes (formulas at the top of sim/cost/layer.h).
 */
#include "sim/cost/layer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

static const char *const type_names[SIM_LAYER_COUNT] = {
    [SIM_LAYER_MATMUL] = "matmul",       [SIM_LAYER_CONV] = "conv",
    [SIM_LAYER_ATTENTION] = "attention", [SIM_LAYER_ELEMENTWISE] = "elementwise",
    [SIM_LAYER_NORM] = "norm",           [SIM_LAYER_POOL] = "pool",
    [SIM_LAYER_EMBEDDING] = "embedding", [SIM_LAYER_LOSS] = "loss",
};

/* Shapes are bounded so that every product below stays under 2^63. */
#define DIM_MAX   (UINT64_C(1) << 31)
#define COUNT_MAX (UINT64_C(1) << 62)

const char *sim_layer_type_name(sim_layer_type_t t)
{
    return (int)t >= 0 && t < SIM_LAYER_COUNT ? type_names[t] : "unknown";
}

int sim_layer_type_parse(const char *name)
{
    for (int t = 0; name && t < SIM_LAYER_COUNT; t++)
        if (strcmp(name, type_names[t]) == 0)
            return t;
    return -1;
}

const char *sim_layer_type_list(void)
{
    return "matmul, conv, attention, elementwise, norm, pool, embedding, loss";
}

uint32_t sim_prec_bytes(sim_precision_t p)
{
    return p == SIM_PREC_F32 ? 4 : 2;
}

static const char *const part_names[SIM_PART_COUNT] = {"none", "embedding", "attention", "ffn",
                                                      "head"};

const char *sim_part_name(sim_part_t p)
{
    return (int)p >= 0 && p < SIM_PART_COUNT ? part_names[p] : "unknown";
}

int sim_part_parse(const char *name)
{
    for (int i = 0; name && i < SIM_PART_COUNT; i++)
        if (strcmp(name, part_names[i]) == 0)
            return i;
    return -1;
}

void sim_layer_init(sim_layer_t *l, sim_layer_type_t type, const char *name)
{
    memset(l, 0, sizeof(*l));
    sim_strlcpy(l->name, name ? name : sim_layer_type_name(type), sizeof(l->name));
    l->type = type;
    l->prec = SIM_PREC_F16;
    l->input_grad = 1;
    l->ops = 1;
    l->inputs = 1;
    l->stride = 1;
    l->rows = type == SIM_LAYER_MATMUL || type == SIM_LAYER_LOSS ? 1 : 0;
}

uint32_t sim_layer_out_h(const sim_layer_t *l)
{
    uint64_t span = (uint64_t)l->h + 2ULL * l->pad;

    if (l->stride == 0 || span < l->kernel)
        return 0;
    return (uint32_t)((span - l->kernel) / l->stride + 1);
}

uint32_t sim_layer_out_w(const sim_layer_t *l)
{
    uint64_t span = (uint64_t)l->w + 2ULL * l->pad;

    if (l->stride == 0 || span < l->kernel)
        return 0;
    return (uint32_t)((span - l->kernel) / l->stride + 1);
}

/* a * b, or COUNT_MAX when that is larger (so that a check can refuse it). */
static uint64_t mul(uint64_t a, uint64_t b)
{
    if (a != 0 && b > COUNT_MAX / a)
        return COUNT_MAX;
    return a * b;
}

static uint64_t spatial_out(const sim_layer_t *l)
{
    return mul(sim_layer_out_h(l), sim_layer_out_w(l));
}

uint64_t sim_layer_weights(const sim_layer_t *l)
{
    switch (l->type) {
    case SIM_LAYER_MATMUL:
        return mul(l->in, l->out) + (l->bias ? l->out : 0);
    case SIM_LAYER_CONV:
        return mul(mul((uint64_t)l->kernel * l->kernel, l->cin), l->cout) + (l->bias ? l->cout : 0);
    case SIM_LAYER_NORM:
        return 2ULL * l->channels;
    case SIM_LAYER_EMBEDDING:
        return mul(l->in, l->out);
    default:
        return 0;
    }
}

uint64_t sim_layer_params(const sim_layer_t *l)
{
    if (!l->tied)
        return sim_layer_weights(l);
    if (l->type == SIM_LAYER_MATMUL)
        return l->bias ? l->out : 0;
    if (l->type == SIM_LAYER_CONV)
        return l->bias ? l->cout : 0;
    return 0;
}

uint64_t sim_layer_macs(const sim_layer_t *l)
{
    switch (l->type) {
    case SIM_LAYER_MATMUL:
        return mul(mul(l->rows, l->in), l->out);
    case SIM_LAYER_CONV:
        return mul(mul(spatial_out(l), (uint64_t)l->kernel * l->kernel), mul(l->cin, l->cout));
    case SIM_LAYER_ATTENTION:
        /* Scores Q.K^T and context P.V: seq x head_dim x seq each, per head. */
        return mul(2ULL * l->heads, mul(mul(l->seq, l->seq), l->head_dim));
    default:
        return 0;
    }
}

uint64_t sim_layer_in_values(const sim_layer_t *l)
{
    switch (l->type) {
    case SIM_LAYER_MATMUL:
        return mul(l->rows, l->in);
    case SIM_LAYER_CONV:
    case SIM_LAYER_POOL:
        return mul(mul(l->h, l->w), l->cin);
    case SIM_LAYER_ATTENTION:
        return mul(3ULL * l->heads, mul(l->seq, l->head_dim));
    case SIM_LAYER_ELEMENTWISE:
        return mul(l->values, l->inputs);
    case SIM_LAYER_NORM:
        return l->values;
    case SIM_LAYER_EMBEDDING:
        return l->rows;
    case SIM_LAYER_LOSS:
        return mul(l->rows, l->out);
    default:
        return 0;
    }
}

uint64_t sim_layer_out_values(const sim_layer_t *l)
{
    switch (l->type) {
    case SIM_LAYER_MATMUL:
        return mul(l->rows, l->out);
    case SIM_LAYER_CONV:
        return mul(spatial_out(l), l->cout);
    case SIM_LAYER_POOL:
        return mul(spatial_out(l), l->cin);
    case SIM_LAYER_ATTENTION:
        return mul(l->heads, mul(l->seq, l->head_dim));
    case SIM_LAYER_ELEMENTWISE:
    case SIM_LAYER_NORM:
        return l->values;
    case SIM_LAYER_EMBEDDING:
        return mul(l->rows, l->out);
    case SIM_LAYER_LOSS:
        return 1;
    default:
        return 0;
    }
}

uint64_t sim_layer_stored_values(const sim_layer_t *l)
{
    switch (l->type) {
    case SIM_LAYER_ATTENTION:
        return sim_layer_in_values(l) + mul(l->heads, mul(l->seq, l->seq));
    case SIM_LAYER_ELEMENTWISE:
        return l->inputs == 1 ? l->values : 0;
    default:
        return sim_layer_in_values(l);
    }
}

uint32_t sim_layer_tensors(const sim_layer_t *l)
{
    switch (l->type) {
    case SIM_LAYER_MATMUL:
    case SIM_LAYER_CONV:
        return l->bias ? 2 : 1;
    case SIM_LAYER_NORM:
        return 2;
    case SIM_LAYER_EMBEDDING:
        return 1;
    default:
        return 0;
    }
}

/* The fields each type needs at least 1 in; a NULL name ends the list. */
struct need {
    const char *name;
    size_t off;
    int wide; /* uint64_t when 1, uint32_t when 0 */
};
#define N64(f)                                                                                     \
    {                                                                                              \
#f, offsetof(sim_layer_t, f), 1                                                            \
    }
#define N32(f)                                                                                     \
    {                                                                                              \
#f, offsetof(sim_layer_t, f), 0                                                            \
    }

static const struct need needs[SIM_LAYER_COUNT][8] = {
    [SIM_LAYER_MATMUL] = {N64(rows), N64(in), N64(out)},
    [SIM_LAYER_CONV] = {N32(h), N32(w), N32(cin), N32(cout), N32(kernel), N32(stride)},
    [SIM_LAYER_ATTENTION] = {N32(heads), N32(seq), N32(head_dim)},
    [SIM_LAYER_ELEMENTWISE] = {N64(values), N32(ops), N32(inputs)},
    [SIM_LAYER_NORM] = {N64(values), N32(channels)},
    [SIM_LAYER_POOL] = {N32(h), N32(w), N32(cin), N32(kernel), N32(stride)},
    [SIM_LAYER_EMBEDDING] = {N64(rows), N64(in), N64(out)},
    [SIM_LAYER_LOSS] = {N64(rows), N64(out)},
};

static int check_sizes(const sim_layer_t *l, char *err, size_t errlen)
{
    const char *tn = sim_layer_type_name(l->type);

    if ((l->type == SIM_LAYER_CONV || l->type == SIM_LAYER_POOL) &&
        (sim_layer_out_h(l) == 0 || sim_layer_out_w(l) == 0)) {
        sim_errf(err, errlen, "%s: the kernel (%u) is larger than the padded input", tn, l->kernel);
        return -EINVAL;
    }
    if (l->type == SIM_LAYER_ELEMENTWISE && l->inputs > 8) {
        sim_errf(err, errlen, "%s: inputs must be 1..8 (got %u)", tn, l->inputs);
        return -EINVAL;
    }
    if (sim_layer_weights(l) >= COUNT_MAX || sim_layer_macs(l) >= COUNT_MAX ||
        sim_layer_stored_values(l) >= COUNT_MAX || sim_layer_out_values(l) >= COUNT_MAX) {
        sim_errf(err, errlen, "%s: the shape is too large", tn);
        return -EINVAL;
    }
    return 0;
}

int sim_layer_check(const sim_layer_t *l, char *err, size_t errlen)
{
    if ((int)l->type < 0 || l->type >= SIM_LAYER_COUNT) {
        sim_errf(err, errlen, "unknown layer type %d (supported types: %s)", (int)l->type,
                 sim_layer_type_list());
        return -EINVAL;
    }
    for (const struct need *n = needs[l->type]; n->name; n++) {
        const char *p = (const char *)l + n->off;
        uint64_t v = n->wide ? *(const uint64_t *)p : *(const uint32_t *)p;

        if (v < 1 || v > DIM_MAX) {
            sim_errf(err, errlen, "%s: %s must be 1..%llu (got %llu)", sim_layer_type_name(l->type),
                     n->name, (unsigned long long)DIM_MAX, (unsigned long long)v);
            return -EINVAL;
        }
    }
    if (l->prec != SIM_PREC_F16 && l->prec != SIM_PREC_F32) {
        sim_errf(err, errlen, "%s: the precision must be f16 or f32", sim_layer_type_name(l->type));
        return -EINVAL;
    }
    return check_sizes(l, err, errlen);
}
