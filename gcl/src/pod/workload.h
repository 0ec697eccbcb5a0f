/*
 * Inside the public model and plan calls of gcl/sim.h (workload.c): the handles wrap sim/'s model
 * and plan, and one charging path (charge.h) serves gcl_charge_layer, train and sim-step alike.
 */
#ifndef GCL_POD_MODEL_H
#define GCL_POD_MODEL_H

#include <pthread.h>

#include "gcl/sim.h"
#include "pod/pod.h"
#include "sim/sim.h"

/* Layer costs of a model at one micro-batch size and one set of constants (a planner builds
 * many plans of one model: each costs the layers once). */
#define GCL_MODEL_COSTS 16
typedef struct {
    uint64_t units, used;
    sim_cost_params_t cp;
    sim_cost_t *fwd, *bwd; /* NULL: the slot is free */
} gcl_model_costs_t;

struct gcl_sim_model {
    sim_model_t m;
    pthread_mutex_t lock; /* the cost slots */
    gcl_model_costs_t costs[GCL_MODEL_COSTS];
    uint64_t tick;
};

struct gcl_sim_plan {
    const sim_model_t *m; /* the model it plans (must outlive the plan) */
    sim_plan_t plan;
    sim_cost_params_t cp;
    const sim_device_t *dev;
    sim_placement_t placement;               /* the config's, parsed */
    uint32_t splits[SIM_PLAN_MAX_STAGES];    /* --layers-per-ipu of a model without sublayers */
};

/* LAYER in sim/'s terms. Returns 0, or -EINVAL with the reason in ERR. */
/* gcl_sim_plan_create, gcl_sim_charge_stage and gcl_sim_param on pod S (or its IPU IPU). */
gcl_status_t gcl_pod_plan_create(const gcl_sim_t *s, gcl_sim_model_t m,
                                 const gcl_sim_plan_config_t *config, gcl_sim_plan_t *out,
                                 char *err, size_t len);
gcl_status_t gcl_pod_charge_stage(gcl_sim_ipu_t *ipu, gcl_sim_plan_t p, int s, gcl_pass_t pass);
gcl_status_t gcl_pod_charge_fragment(gcl_sim_ipu_t *ipu, gcl_sim_plan_t p, int f, gcl_pass_t pass);
int gcl_pod_param(const gcl_sim_t *s, int i, gcl_sim_param_t *out);

#endif /* GCL_POD_MODEL_H */
