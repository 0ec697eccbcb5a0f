/* Optimizers; see optim.h. */
#include "model/optim.h"

#include <math.h>

int optim_state_vectors(const optim_cfg_t *c)
{
    return c->kind == OPTIM_ADAM ? 2 : 1;
}

const char *optim_name(optim_kind_t kind)
{
    return kind == OPTIM_ADAM ? "adam" : "sgd";
}

const char *lr_schedule_name(lr_schedule_t s)
{
    return s == LR_COSINE ? "cosine" : "constant";
}

double optim_lr(const optim_cfg_t *c, long step, long total)
{
    if (c->warmup_steps > 0 && step < c->warmup_steps)
        return c->lr * (double)(step + 1) / (double)c->warmup_steps;
    if (c->schedule == LR_CONSTANT || total <= c->warmup_steps)
        return c->lr;
    double t = (double)(step - c->warmup_steps) / (double)(total - c->warmup_steps);
    return c->lr * 0.5 * (1.0 + cos(M_PI * t));
}

/* Heavy-ball momentum: v = mu v + (g + wd w); w -= lr v. */
static void sgd(const optim_cfg_t *c, float lr, float *w, const float *g, float *v, size_t n,
                int decay)
{
    float mu = (float)c->momentum, wd = decay ? (float)c->weight_decay : 0.0f;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i] + wd * w[i];
        v[i] = mu * v[i] + gi;
        w[i] -= lr * v[i];
    }
}

/* Adam with bias correction, and AdamW's decoupled weight decay. */
static void adam(const optim_cfg_t *c, float lr, long step, float *w, const float *g, float *m,
                 float *v, size_t n, int decay)
{
    float b1 = (float)c->beta1, b2 = (float)c->beta2, eps = (float)c->eps;
    /* The corrections in double from the step number alone: the same on every replica. */
    float c1 = (float)(1.0 / (1.0 - pow(c->beta1, (double)(step + 1))));
    float c2 = (float)(1.0 / (1.0 - pow(c->beta2, (double)(step + 1))));
    float wd = decay ? (float)(c->weight_decay) * lr : 0.0f;
    for (size_t i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        float mh = m[i] * c1, vh = v[i] * c2;
        w[i] -= lr * mh / (sqrtf(vh) + eps) + wd * w[i];
    }
}

void optim_update(const optim_cfg_t *c, double lr, long step, float *w, const float *g, float *s0,
                  float *s1, size_t n, int decay)
{
    if (c->kind == OPTIM_ADAM)
        adam(c, (float)lr, step, w, g, s0, s1, n, decay);
    else
        sgd(c, (float)lr, w, g, s0, n, decay);
}

void optim_update_layers(const optim_cfg_t *c, double lr, long step, const model_shape_t *m, int l0,
                         int l1, float *w, const float *g, float *s0, float *s1)
{
    for (int l = l0; l < l1; l++) {
        size_t off = m->offset[l] - m->offset[l0], nb = m->layer[l].nbias;
        size_t nw = m->layer[l].nweights;
        float *t1 = s1 ? s1 + off : NULL;
        optim_update(c, lr, step, w + off, g + off, s0 + off, t1, nw, 1);
        optim_update(c, lr, step, w + off + nw, g + off + nw, s0 + off + nw, t1 ? t1 + nw : NULL,
                     nb, 0);
    }
}

double optim_bytes_per_param(const optim_cfg_t *c)
{
    /* Read w, g and the state, write w and the state. */
    return c->kind == OPTIM_ADAM ? 4.0 * 7 : 4.0 * 5;
}
