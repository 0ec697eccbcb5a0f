/*
 * The model container (sim/model/model_def.h): layers, totals and names.
 */
#include "sim/model/model_def.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

int sim_model_init(sim_model_t *m, const char *name)
{
    memset(m, 0, sizeof(*m));
    sim_strlcpy(m->name, name ? name : "model", sizeof(m->name));
    m->samples_per_unit = 1;
    m->optimizer = SIM_OPTIM_MOMENTUM;
    m->recompute = SIM_RECOMPUTE_NONE;
    m->state = SIM_STATE_ONCHIP;
    return 0;
}

void sim_model_free(sim_model_t *m)
{
    if (m == NULL)
        return;
    free(m->layers);
    m->layers = NULL;
    m->num_layers = m->cap = 0;
}

int sim_model_add(sim_model_t *m, const sim_layer_t *l)
{
    if (m->num_layers >= SIM_MODEL_MAX_LAYERS)
        return -E2BIG;
    if (m->num_layers == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        sim_layer_t *n = realloc(m->layers, cap * sizeof(*n));

        if (n == NULL)
            return -ENOMEM;
        m->layers = n;
        m->cap = cap;
    }
    m->layers[m->num_layers++] = *l;
    return 0;
}

uint64_t sim_model_params(const sim_model_t *m)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < m->num_layers; i++)
        sum += sim_layer_params(&m->layers[i]);
    return sum;
}

double sim_model_macs_per_sample(const sim_model_t *m)
{
    double sum = 0;

    for (size_t i = 0; i < m->num_layers; i++)
        sum += (double)sim_layer_macs(&m->layers[i]);
    return sum / (m->samples_per_unit > 0 ? m->samples_per_unit : 1);
}

uint32_t sim_model_tensors(const sim_model_t *m, size_t first, size_t last)
{
    uint32_t sum = 0;

    for (size_t i = first; i < last && i < m->num_layers; i++)
        sum += sim_layer_tensors(&m->layers[i]);
    return sum;
}

static const char *const recompute_names[SIM_RECOMPUTE_COUNT] = {"none", "checkpoints", "stage"};
static const char *const state_names[SIM_STATE_COUNT] = {"on-chip", "sharded", "streaming",
                                                            "streaming-sharded"};

const char *sim_recompute_name(sim_recompute_t r)
{
    return (int)r >= 0 && r < SIM_RECOMPUTE_COUNT ? recompute_names[r] : "unknown";
}

int sim_recompute_parse(const char *name)
{
    for (int i = 0; name && i < SIM_RECOMPUTE_COUNT; i++)
        if (strcmp(name, recompute_names[i]) == 0)
            return i;
    return -1;
}

const char *sim_state_place_name(sim_state_place_t s)
{
    return (int)s >= 0 && s < SIM_STATE_COUNT ? state_names[s] : "unknown";
}

int sim_state_place_parse(const char *name)
{
    for (int i = 0; name && i < SIM_STATE_COUNT; i++)
        if (strcmp(name, state_names[i]) == 0)
            return i;
    return -1;
}
