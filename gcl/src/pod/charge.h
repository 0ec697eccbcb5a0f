/*
 * Charging a program's work to a simulated IPU's clock (charge.c): layers of gcl/sim.h turned
 * into sim/'s, and their cost, a weight update's, the host feed's and a transfer's, each
 * advancing the IPU's statistics and adding one slice to its trace.
 */
#ifndef GCL_POD_LAYER_H
#define GCL_POD_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "gcl/sim.h"
#include "pod/pod.h"
#include "sim/sim.h"

/* A public layer as sim/ describes it: 0, or a negative errno with a sentence in ERR. */
int gcl_layer_to_sim(const gcl_layer_t *layer, sim_layer_t *out, char *err, size_t errlen);
void gcl_layer_from_sim(const sim_layer_t *l, gcl_layer_t *out);

/* Advances IPU's clock by C: compute, then the sync, then the exchange; one trace slice NAME
 * (gcl_pod_advance_layer names it "TYPE PASS"). */
void gcl_pod_advance(gcl_sim_ipu_t *ipu, const sim_cost_t *c, const char *name);
void gcl_pod_advance_layer(gcl_sim_ipu_t *ipu, const sim_cost_t *c, sim_layer_type_t type,
                           sim_pass_t pass);

/* UNITS of layer L in PASS, costed on pod S (NAME for the trace, or NULL): 0, or -1 when the
 * layer cannot be costed so. */
int gcl_pod_charge_layer(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const sim_layer_t *l,
                         sim_pass_t pass, uint64_t units, const char *name);
/* A weight update U (checked by the caller): 0, or -1 when it cannot be costed. */
int gcl_pod_charge_update(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const gcl_update_t *u);
/* SAMPLES from the host feed FEED (its stream set up at the IPU's first call, for a job of
 * NUM_REPLICAS replicas on NUM_IPUS IPUs): GCL_OK or GCL_ERR_NO_HOST_MEMORY. */
gcl_status_t gcl_pod_feed(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const gcl_sim_feed_t *feed,
                          long samples, int num_replicas, int num_ipus);
/* BYTES from global IPU ME to DST over the pod's route: 0, or -1 when there is none. */
int gcl_pod_charge_transfer(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, int me, int dst, size_t bytes);
/* What update U costs on pod S (what gcl_pod_charge_update charges). Returns 0 or -1. */
int gcl_pod_update_cost(const gcl_sim_t *s, const gcl_update_t *u, sim_cost_t *c);
/* gcl_sim_host_exchange: one host sync (the pod's host_sync_ns), as host time. */
void gcl_pod_host_exchange(const gcl_sim_t *s, gcl_sim_ipu_t *ipu);
/* gcl_sim_charge_syncs: LOCAL syncs inside a domain and SPANNING ones, as sync time. */
void gcl_pod_charge_syncs(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, uint64_t local,
                          uint64_t spanning);
/* gcl_sim_charge_uplink: BYTES at the domain's uplink rate (gateway_domain_gbs), as exchange. */
void gcl_pod_charge_uplink(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, double bytes);

#endif /* GCL_POD_LAYER_H */
