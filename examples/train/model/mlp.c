/*
 * The multi-layer perceptron: dense layers of the --hidden widths with a ReLU after each, then a
 * dense layer to the classes; it reads an image's pixels as one vector (784 for Fashion-MNIST).
 * The default, 784-256-128-10, has 235,146 parameters.
 */
#include <stdio.h>

#include "model/model.h"

static int mlp_describe(const model_opts_t *o, int c, int h, int w, int classes, model_spec_t *spec,
                        char *err, size_t errlen)
{
    if (o->nhidden < 0 || o->nhidden + 1 > MODEL_MAX_LAYERS) {
        snprintf(err, errlen, "%d hidden layers: expected at most %d", o->nhidden,
                 MODEL_MAX_LAYERS - 1);
        return -1;
    }
    *spec = (model_spec_t){.c = c, .h = h, .w = w, .nlayers = o->nhidden + 1};
    for (int i = 0; i < o->nhidden; i++)
        spec->layer[i] = (layer_spec_t){LAYER_DENSE, o->hidden[i], 0, 0, 0};
    spec->layer[o->nhidden] = (layer_spec_t){LAYER_DENSE, classes, 0, 0, 0};
    return 0;
}

const model_def_t model_mlp = {.name = "mlp",
                               .title = "MLP",
                               .epochs = 30,
                               .sgd_lr = 0.05,
                               .adam_lr = 0.001,
                               .describe = mlp_describe};
