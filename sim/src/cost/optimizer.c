/*
 * Optimizers and the cost of a weight update (sim/cost/optimizer.h). Operations per parameter
 * (assumed, each within a factor of 2): sgd 2, momentum 4, adam 12, lamb 16, lars 6 (momentum and
 * the trust ratio's scaling; f32); lamb and lars add 2 reduction supersteps per weight tensor
 * (the norms of the weights and of the update that their trust ratio divides).
 */
#include "sim/cost/optimizer.h"

#include <errno.h>
#include <string.h>

static const char *const optim_names[SIM_OPTIM_COUNT] = {"sgd", "momentum", "adam", "lamb", "lars"};

const char *sim_optimizer_name(sim_optimizer_t o)
{
    return (int)o >= 0 && o < SIM_OPTIM_COUNT ? optim_names[o] : "unknown";
}

int sim_optimizer_parse(const char *name)
{
    for (int i = 0; name && i < SIM_OPTIM_COUNT; i++)
        if (strcmp(name, optim_names[i]) == 0)
            return i;
    return -1;
}

uint32_t sim_optimizer_states(sim_optimizer_t o)
{
    return o == SIM_OPTIM_SGD ? 0 : o == SIM_OPTIM_MOMENTUM || o == SIM_OPTIM_LARS ? 1 : 2;
}

int sim_update_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_update_t *u,
                    sim_cost_t *out)
{
    static const double ops[SIM_OPTIM_COUNT] = {2, 4, 12, 16, 6};
    uint32_t states, bytes;

    *out = (sim_cost_t){0};
    if ((int)u->optimizer < 0 || u->optimizer >= SIM_OPTIM_COUNT)
        return -EINVAL;
    if (u->params == 0)
        return 0;
    states = sim_optimizer_states(u->optimizer);
    /* Read and write the weights and the state, read the gradient and zero its accumulator. */
    bytes = 2 * u->weight_bytes + 2 * u->grad_bytes + 2 * states * u->state_bytes;
    sim_vector_work(cp, d, SIM_PREC_F32, u->params, ops[u->optimizer], 1, bytes, 1, out);
    if (u->optimizer == SIM_OPTIM_LAMB || u->optimizer == SIM_OPTIM_LARS) {
        sim_cost_t norms = {0};

        sim_vector_work(cp, d, SIM_PREC_F32, 0, 0, 0, 0, 2 * u->tensors, &norms);
        sim_cost_add(out, &norms);
    }
    if (u->streaming && states > 0) {
        double moved = 2.0 * states * u->state_bytes * (double)u->params;

        out->exchange =
            sim_time_add(out->exchange, sim_ps_of(moved / (double)cp->streaming_bandwidth));
    }
    return 0;
}
