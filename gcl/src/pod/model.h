/*
 * Inside the public model, plan and layer calls of gcl/sim.h (simlayer.c, simmodel.c): the
 * handles wrap sim/'s model and plan, and one charging path serves gcl_charge_layer, train and
 * sim-step alike.
 */
#ifndef GCL_SIMMODEL_H
#define GCL_SIMMODEL_H

#include "gcl/sim.h"
#include "sim/sim.h"

struct gcl_sim_model {
    sim_model_t m;
};

struct gcl_sim_plan {
    const sim_model_t *m; /* the model it plans (must outlive the plan) */
    sim_plan_t plan;
    sim_cost_params_t cp;
    const sim_device_t *dev;
};

/* LAYER in sim/'s terms. Returns 0, or -EINVAL with the reason in ERR. */
int gcl_layer_to_sim(const gcl_layer_t *layer, sim_layer_t *out, char *err, size_t errlen);
/* And back; the name points into L. */
void gcl_layer_from_sim(const sim_layer_t *l, gcl_layer_t *out);

/* Charges PASS of L over UNITS units to CTX's clock, as the slice NAME (NULL: "TYPE PASS").
 * Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT (with the reason on CTX). */
gcl_status_t gcl_sim_charge(gcl_ctx_t ctx, const sim_layer_t *l, sim_pass_t pass, uint64_t units,
                            const char *name);

/* Advances CTX's clock by cost C of a layer of TYPE in PASS (one trace slice "TYPE PASS"). */
void gcl_sim_advance(gcl_ctx_t ctx, const sim_cost_t *c, sim_layer_type_t type, sim_pass_t pass);

#endif /* GCL_SIMMODEL_H */
