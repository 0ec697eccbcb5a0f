/* A model's shapes, split, initial weights, forward and backward; see model.h. */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/rng.h"

static const model_def_t *const models[] = {&model_mlp, &model_cnn};

const model_def_t *model_find(const char *name)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (!strcmp(models[i]->name, name))
            return models[i];
    return NULL;
}

const char *model_title(const model_spec_t *spec)
{
    for (int l = 0; l < spec->nlayers; l++)
        if (spec->layer[l].kind != LAYER_DENSE)
            return model_cnn.title;
    return model_mlp.title;
}

void layer_text(const layer_spec_t *s, char *buf, size_t len)
{
    if (s->kind == LAYER_DENSE)
        snprintf(buf, len, "dense:%d", s->out);
    else if (s->kind == LAYER_CONV && s->stride == 1 && s->pad == s->kernel / 2)
        snprintf(buf, len, "conv:%d:%d", s->out, s->kernel);
    else if (s->kind == LAYER_CONV)
        snprintf(buf, len, "conv:%d:%d:%d:%d", s->out, s->kernel, s->stride, s->pad);
    else if (s->stride == s->kernel && s->pad == 0)
        snprintf(buf, len, "pool:%d", s->kernel);
    else
        snprintf(buf, len, "pool:%d:%d:%d", s->kernel, s->stride, s->pad);
}

void layer_name(const model_shape_t *m, int l, char *buf, size_t len)
{
    static const char *const kinds[] = {"dense", "conv", "pool"};
    int rank = 1;
    for (int i = 0; i < l; i++)
        rank += m->layer[i].kind == m->layer[l].kind;
    snprintf(buf, len, "%s%d", kinds[m->layer[l].kind], rank);
}

void model_text(const model_shape_t *m, char *buf, size_t len)
{
    size_t at = 0;
    const model_spec_t *s = &m->spec;
    int mlp = !strcmp(model_title(s), model_mlp.title);
    at += (size_t)snprintf(buf, len, "%s ", model_title(s));
    if (mlp) {
        for (int l = 0; l <= m->nlayers && at < len; l++)
            at += (size_t)snprintf(buf + at, len - at, "%s%d", l ? "-" : "", m->dims[l]);
        return;
    }
    at += (size_t)snprintf(buf + at, len - at, "%dx%dx%d", s->h, s->w, s->c);
    for (int l = 0; l < m->nlayers && at < len; l++) {
        char t[64];
        layer_text(&s->layer[l], t, sizeof t);
        at += (size_t)snprintf(buf + at, len - at, " %s", t);
    }
}

/* Works out layer L's shapes from its input IN (c, h, w) and spec S. Returns 0, or -1 with ERR. */
static int layer_build(layer_t *y, const layer_spec_t *s, const conv_geom_t *in, int l, char *err,
                       size_t errlen)
{
    char name[64];
    layer_text(s, name, sizeof name);
    memset(y, 0, sizeof *y);
    y->kind = s->kind;
    y->g = *in;
    if (s->kind == LAYER_DENSE) {
        y->g.c = in->c * in->h * in->w, y->g.h = y->g.w = 1;
        y->g.oc = s->out, y->g.oh = y->g.ow = 1;
        y->nweights = (size_t)y->g.c * (size_t)s->out;
        y->nbias = (size_t)s->out;
        y->macs = (double)y->nweights;
        return 0;
    }
    y->g.kernel = s->kernel, y->g.stride = s->stride, y->g.pad = s->pad;
    int big = in->h > in->w ? in->h : in->w;
    if (s->kernel < 1 || s->kernel > 65535 || s->stride < 1 || s->pad < 0 || s->pad >= s->kernel ||
        s->stride > big + 2 * s->pad) {
        snprintf(err, errlen,
                 "layer %d (%s) on a %dx%dx%d input: kernel %d, stride %d, padding %d: expected a "
                 "kernel from 1 to 65535, a stride from 1 to the padded input (%d), a padding "
                 "below the kernel",
                 l + 1, name, in->h, in->w, in->c, s->kernel, s->stride, s->pad, big + 2 * s->pad);
        return -1;
    }
    conv_geom_finish(&y->g);
    if (y->g.oh < 1 || y->g.ow < 1) {
        snprintf(err, errlen,
                 "layer %d (%s): a %dx%d window does not fit its %dx%dx%d input padded by %d "
                 "(%dx%d)",
                 l + 1, name, s->kernel, s->kernel, in->h, in->w, in->c, s->pad, in->h + 2 * s->pad,
                 in->w + 2 * s->pad);
        return -1;
    }
    y->g.oc = s->kind == LAYER_CONV ? s->out : in->c;
    if (s->kind == LAYER_CONV) {
        y->nweights = (size_t)s->out * s->kernel * s->kernel * in->c;
        y->nbias = (size_t)s->out;
        y->macs = (double)y->nweights * y->g.oh * y->g.ow;
    }
    return 0;
}

int model_shape_build(model_shape_t *m, const model_spec_t *spec, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->spec = *spec;
    m->nlayers = spec->nlayers;
    if (spec->nlayers < 1 || spec->nlayers > MODEL_MAX_LAYERS) {
        snprintf(err, errlen, "%d layers: expected 1 to %d", spec->nlayers, MODEL_MAX_LAYERS);
        return -1;
    }
    conv_geom_t in = {.c = spec->c, .h = spec->h, .w = spec->w};
    m->dims[0] = spec->c * spec->h * spec->w;
    for (int l = 0; l < spec->nlayers; l++) {
        const layer_spec_t *s = &spec->layer[l];
        if (s->kind != LAYER_POOL && (s->out < 1 || s->out > MODEL_MAX_VALUES)) {
            snprintf(err, errlen, "layer %d: %d outputs: expected 1 to %d", l + 1, s->out,
                     MODEL_MAX_VALUES);
            return -1;
        }
        layer_t *y = &m->layer[l];
        if (layer_build(y, s, &in, l, err, errlen))
            return -1;
        y->relu = s->kind != LAYER_POOL && l < spec->nlayers - 1;
        double values = (double)y->g.oc * y->g.oh * y->g.ow;
        if (values > MODEL_MAX_VALUES || (double)y->nweights > (double)((size_t)1 << 34)) {
            char name[64];
            layer_text(s, name, sizeof name);
            snprintf(err, errlen,
                     "layer %d (%s) on a %dx%dx%d input: %.0f output values per sample and %zu "
                     "weights: expected at most %d values and 2^34 weights",
                     l + 1, name, in.h, in.w, in.c, values, y->nweights, MODEL_MAX_VALUES);
            return -1;
        }
        m->dims[l + 1] = (int)values;
        m->offset[l + 1] = m->offset[l] + y->nweights + y->nbias;
        in = (conv_geom_t){.c = y->g.oc, .h = y->g.oh, .w = y->g.ow};
    }
    return 0;
}

int model_shape_init(model_shape_t *m, int in, const int *hidden, int nhidden, int classes)
{
    model_opts_t o = {hidden, nhidden, NULL, NULL};
    model_spec_t spec;
    char err[256];
    if (model_mlp.describe(&o, 1, 1, in, classes, &spec, err, sizeof err))
        return -1;
    return model_shape_build(m, &spec, err, sizeof err);
}

/* The smallest largest-stage size for layers [from, n) over K stages, and where the first of
 * them ends; a plain dynamic program, as there are at most 16 layers. */
int model_split(const model_shape_t *m, int k, int *first)
{
    int n = m->nlayers;
    if (k < 1 || k > n)
        return -1;
    /* best[s][i]: the least possible maximum when layers [i, n) go to s stages. */
    size_t best[MODEL_MAX_LAYERS + 1][MODEL_MAX_LAYERS + 1];
    int cut[MODEL_MAX_LAYERS + 1][MODEL_MAX_LAYERS + 1];
    for (int i = 0; i < n; i++)
        best[1][i] = m->offset[n] - m->offset[i];
    for (int s = 2; s <= k; s++) {
        for (int i = 0; i + s <= n; i++) {
            best[s][i] = SIZE_MAX;
            for (int j = i + 1; j + s - 1 <= n; j++) {
                size_t here = m->offset[j] - m->offset[i];
                size_t worst = here > best[s - 1][j] ? here : best[s - 1][j];
                /* A tie goes to the cut that sends fewer values between the stages (a pooling
                 * layer, which has no parameters, goes with the layers before it), then to the
                 * earlier one. */
                if (worst < best[s][i] ||
                    (worst == best[s][i] && m->dims[j] < m->dims[cut[s][i]])) {
                    best[s][i] = worst;
                    cut[s][i] = j;
                }
            }
        }
    }
    first[0] = 0;
    for (int s = k, i = 0, idx = 1; s > 1; s--, idx++) {
        i = cut[s][i];
        first[idx] = i;
    }
    first[k] = n;
    return 0;
}

void model_init_layer(const model_shape_t *m, int l, uint64_t seed, float *params)
{
    const layer_t *y = &m->layer[l];
    if (y->nweights == 0)
        return;
    rng_t r;
    rng_seed(&r, seed, 0x4c41594552ull + (uint64_t)l); /* "LAYER" + l: one stream per layer */
    size_t fan_in = y->nweights / (size_t)y->g.oc;
    float bound = sqrtf(6.0f / (float)fan_in);
    for (size_t i = 0; i < y->nweights; i++)
        params[i] = (2.0f * rng_float(&r) - 1.0f) * bound;
    memset(params + y->nweights, 0, y->nbias * sizeof(float));
}

/* Where each convolution of [L0, L1)'s im2col matrix for ROWS samples starts in the buffer of
 * model_col_floats: AT[l - l0]; returns the total. */
static size_t col_offsets(const model_shape_t *m, int l0, int l1, int rows, size_t *at)
{
    size_t n = 0;
    for (int l = l0; l < l1; l++) {
        at[l - l0] = n;
        n += m->layer[l].kind == LAYER_CONV ? conv_col_floats(&m->layer[l].g, rows) : 0;
    }
    return n;
}

size_t model_col_floats(const model_shape_t *m, int l0, int l1, int rows)
{
    size_t at[MODEL_MAX_LAYERS];
    return col_offsets(m, l0, l1, rows, at);
}

size_t model_inner_values(const model_shape_t *m, int l0, int l1)
{
    size_t most = 0;
    for (int l = l0 + 1; l < l1; l++)
        most = (size_t)m->dims[l] > most ? (size_t)m->dims[l] : most;
    return most;
}

void model_forward(const model_shape_t *m, int l0, int l1, const float *w, float *const *act,
                   int rows, float *col)
{
    size_t at[MODEL_MAX_LAYERS];
    col_offsets(m, l0, l1, rows, at);
    for (int l = l0; l < l1; l++) {
        const layer_t *y = &m->layer[l];
        const float *p = w + (m->offset[l] - m->offset[l0]);
        const float *x = act[l - l0];
        float *out = act[l - l0 + 1];
        if (y->kind == LAYER_DENSE)
            dense_forward(x, p, p + y->nweights, out, rows, y->g.c, y->g.oc, y->relu);
        else if (y->kind == LAYER_CONV)
            conv_forward(&y->g, x, p, p + y->nweights, out, rows, y->relu, col + at[l - l0]);
        else
            pool_forward(&y->g, x, out, rows);
    }
}

void model_backward(const model_shape_t *m, int l0, int l1, const float *w, float *const *act,
                    float *dy, float *g, float *dx, int rows, float *const scratch[2], float *col)
{
    size_t at[MODEL_MAX_LAYERS];
    col_offsets(m, l0, l1, rows, at);
    for (int l = l1 - 1, t = 0; l >= l0; l--, t++) {
        const layer_t *y = &m->layer[l];
        if (y->relu)
            relu_backward(act[l - l0 + 1], dy, (size_t)rows * (size_t)m->dims[l + 1]);
        float *in_grad = l > l0 ? scratch[t % 2] : dx;
        size_t off = m->offset[l] - m->offset[l0];
        const float *p = w + off, *x = act[l - l0];
        float *gp = g + off;
        if (y->kind == LAYER_DENSE)
            dense_backward(x, p, dy, gp, gp + y->nweights, in_grad, rows, y->g.c, y->g.oc);
        else if (y->kind == LAYER_CONV)
            conv_backward(&y->g, x, p, dy, gp, gp + y->nweights, in_grad, rows, col + at[l - l0],
                          1);
        else if (in_grad)
            pool_backward(&y->g, x, dy, in_grad, rows);
        dy = in_grad;
    }
}
