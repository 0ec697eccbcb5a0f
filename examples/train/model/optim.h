/*
 * Optimizers and the learning-rate schedule. Every update is an elementwise function of the
 * all-reduced gradient (bitwise the same on every replica, by libgcl's contract), the weights and
 * the optimizer state, evaluated in a fixed order: so replicas that start equal stay bitwise
 * equal, and a run resumed from a checkpoint continues exactly as the uninterrupted one.
 */
#ifndef TRAIN_OPTIM_H
#define TRAIN_OPTIM_H

#include <stddef.h>

#include "model/model.h"

typedef enum { OPTIM_SGD = 0, OPTIM_ADAM = 1 } optim_kind_t;
typedef enum { LR_CONSTANT = 0, LR_COSINE = 1 } lr_schedule_t;

typedef struct {
    optim_kind_t kind;
    double lr;           /* peak learning rate */
    double momentum;     /* sgd: heavy-ball momentum (0: plain SGD) */
    double beta1, beta2; /* adam */
    double eps;          /* adam */
    double weight_decay; /* L2 on the weights (not biases) for sgd, decoupled (AdamW) for adam */
    lr_schedule_t schedule;
    long warmup_steps; /* linear warm-up from lr/warmup to lr */
} optim_cfg_t;

/* State vectors the optimizer keeps per parameter: 1 (momentum) or 2 (Adam's moments). */
int optim_state_vectors(const optim_cfg_t *c);
const char *optim_name(optim_kind_t kind);
const char *lr_schedule_name(lr_schedule_t s);

/* The learning rate of step STEP (0-based) of TOTAL: warm-up, then constant or cosine to 0. */
double optim_lr(const optim_cfg_t *c, long step, long total);

/*
 * One update of N parameters W from gradient G at step STEP (0-based) with learning rate LR.
 * S0 and S1 are the state vectors (S1 unused by sgd). DECAY is 1 for weights, which weight
 * decay applies to, and 0 for biases.
 */
void optim_update(const optim_cfg_t *c, double lr, long step, float *w, const float *g, float *s0,
                  float *s1, size_t n, int decay);

/*
 * The update of layers [L0, L1) of M, layer by layer: each layer's weights with weight decay,
 * then its biases without. W, G, S0 and S1 (NULL for sgd) hold those layers' slice of the
 * model's parameter vector, which starts at the parameters of layer L0.
 */
void optim_update_layers(const optim_cfg_t *c, double lr, long step, const model_shape_t *m, int l0,
                         int l1, float *w, const float *g, float *s0, float *s1);

/* Bytes an update moves per parameter (for the simulated cost). */
double optim_bytes_per_param(const optim_cfg_t *c);

#endif
