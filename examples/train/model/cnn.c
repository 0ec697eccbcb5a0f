/*
 * The convolutional network: a list of layers, each a convolution (with a ReLU), a max pooling
 * or a dense layer (with a ReLU), then a dense layer to the classes. The list comes from
 * --layers, from a model file (--model FILE: the same items, one or more a line, # comments),
 * or is the default, CNN_DEFAULT_LAYERS. Items, separated by commas or new lines:
 *
 *   conv:C:K[:S[:P]]   a K x K convolution to C channels, stride S (1), padding P (K / 2)
 *   pool:K[:S[:P]]     K x K max pooling, stride S (K), padding P (0)
 *   dense:N            a dense layer of N outputs
 *
 * The default on 28 x 28 x 1 Fashion-MNIST images:
 *
 *   layer          output     parameters  forward MACs per sample
 *   conv:16:3      28x28x16          160      112,896
 *   pool:2         14x14x16            0            -
 *   conv:32:3      14x14x32        4,640      903,168
 *   pool:2          7x7x32             0            -
 *   dense:128         128        200,832      200,704
 *   dense:10           10          1,290        1,280
 *                              = 206,922    1,218,048
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define CNN_DEFAULT_LAYERS "conv:16:3,pool:2,conv:32:3,pool:2,dense:128"
#define CNN_SYNTAX         "conv:C:K[:S[:P]], pool:K[:S[:P]] or dense:N"

/* The numbers after NAME: in ITEM ("conv:16:3" -> 16, 3). Returns how many (at most MAX), or -1
 * when one is not a plain integer from 0 to 1 << 24. */
static int numbers(const char *item, size_t skip, int *v, int max)
{
    int n = 0;
    const char *p = item + skip;
    while (*p == ':' && n < max) {
        char *end;
        errno = 0;
        long x = strtol(p + 1, &end, 10);
        if (end == p + 1 || !isdigit((unsigned char)p[1]) || errno || x > (1L << 24))
            return -1;
        v[n++] = (int)x;
        p = end;
    }
    return *p ? -1 : n;
}

/* One item into S. Returns 0, or -1 with ERR (which WHERE begins). */
static int parse_item(const char *item, const char *where, layer_spec_t *s, char *err,
                      size_t errlen)
{
    int v[4] = {0}, n;
    if (!strncmp(item, "conv:", 5) && (n = numbers(item, 4, v, 4)) >= 2) {
        *s = (layer_spec_t){LAYER_CONV, v[0], v[1], n > 2 ? v[2] : 1, n > 3 ? v[3] : v[1] / 2};
        if (v[0] >= 1 && v[1] >= 1)
            return 0;
        snprintf(err, errlen,
                 "%s: '%s': a convolution needs at least 1 channel and a kernel of "
                 "at least 1 (%d channels, kernel %d)",
                 where, item, v[0], v[1]);
        return -1;
    }
    if (!strncmp(item, "pool:", 5) && (n = numbers(item, 4, v, 3)) >= 1) {
        *s = (layer_spec_t){LAYER_POOL, 0, v[0], n > 1 ? v[1] : v[0], n > 2 ? v[2] : 0};
        if (v[0] >= 1)
            return 0;
        snprintf(err, errlen, "%s: '%s': a pooling window of at least 1 (kernel %d)", where, item,
                 v[0]);
        return -1;
    }
    if (!strncmp(item, "dense:", 6) && numbers(item, 5, v, 1) == 1) {
        *s = (layer_spec_t){LAYER_DENSE, v[0], 0, 0, 0};
        if (v[0] >= 1)
            return 0;
        snprintf(err, errlen, "%s: '%s': a dense layer of at least 1 output", where, item);
        return -1;
    }
    const char *colon = strchr(item, ':');
    int known = colon && (!strncmp(item, "conv:", 5) || !strncmp(item, "pool:", 5) ||
                          !strncmp(item, "dense:", 6));
    snprintf(err, errlen, "%s: %s '%s' (expected %s)", where,
             known ? "bad numbers in layer" : "unknown layer", item, CNN_SYNTAX);
    return -1;
}

/* Splits TEXT into items at commas and new lines, skipping blanks and # comments. */
static int parse_list(const char *text, const char *source, model_spec_t *spec, char *err,
                      size_t errlen)
{
    int line = 1, multiline = strchr(text, '\n') != NULL;
    const char *p = text;
    spec->nlayers = 0;
    while (*p) {
        size_t len = strcspn(p, ",\n#");
        char item[128], where[320];
        const char *a = p, *b = p + len;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (multiline)
            snprintf(where, sizeof where, "%s line %d", source, line);
        else
            snprintf(where, sizeof where, "%s", source);
        snprintf(item, sizeof item, "%.*s", (int)(b - a), a);
        if (*item) {
            if (spec->nlayers == MODEL_MAX_LAYERS - 1) {
                snprintf(err, errlen, "%s: more than %d layers (the classifier makes %d)", where,
                         MODEL_MAX_LAYERS - 1, MODEL_MAX_LAYERS);
                return -1;
            }
            if (parse_item(item, where, &spec->layer[spec->nlayers++], err, errlen))
                return -1;
        }
        p += len;
        if (*p == '#')
            p += strcspn(p, "\n");
        if (*p == '\n')
            line++;
        if (*p)
            p++;
    }
    if (spec->nlayers == 0) {
        snprintf(err, errlen, "%s: no layers (expected items such as %s)", source,
                 CNN_DEFAULT_LAYERS);
        return -1;
    }
    return 0;
}

static int cnn_describe(const model_opts_t *o, int c, int h, int w, int classes, model_spec_t *spec,
                        char *err, size_t errlen)
{
    *spec = (model_spec_t){.c = c, .h = h, .w = w};
    const char *text = o->layers ? o->layers : CNN_DEFAULT_LAYERS;
    if (parse_list(text, o->source ? o->source : "--layers", spec, err, errlen))
        return -1;
    spec->layer[spec->nlayers++] = (layer_spec_t){LAYER_DENSE, classes, 0, 0, 0};
    return 0;
}

/* train's defaults for the CNN: docs/train.md says how they were chosen. */
const model_def_t model_cnn = {.name = "cnn",
                               .title = "CNN",
                               .epochs = 20,
                               .augment = 1,
                               .warmup_epochs = 1,
                               .sgd_lr = 0.1,
                               .adam_lr = 0.001,
                               .weight_decay = 0.0005,
                               .describe = cnn_describe};
