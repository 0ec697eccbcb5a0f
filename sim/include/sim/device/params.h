/*
 * Every constant of the simulated pod's cost model that a pod description may set, with its
 * default, unit, where the number comes from, and (for assumed and fitted ones) the range we
 * believe in. One table (sim/src/device/params.c) serves the topology-file parser (each key is a file
 * key and an override: "POD64,ipulink_latency_ns=700"), sim-step --sensitivity (which halves and
 * doubles every assumed and fitted one) and docs/validation.md.
 *
 * The device's datasheet numbers (tiles, SRAM, clock, peaks, bandwidths) are not here: they are
 * the GC200 preset in sim/src/device/device.c, each with its source.
 */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/device/device.h"
#include "sim/base/time.h"

typedef struct sim_cost_params {
    int ipu; /* the device: 0 the GC200, 1 the Bow IPU (sim/device/device.h; topology key "ipu") */
    /* Fitted (scripts/calibrate; docs/validation.md says to what). */
    double amp_efficiency;  /* fraction of the AMP peak a product (matmul, attention, conv)
                               reaches inside its compute set */
    double conv_efficiency; /* assumed: a convolution's share over a matmul's (multiplies
                               amp_efficiency) */
    sim_time_t host_sync;   /* ps: one synchronisation of the IPUs with the host (a round trip
                               through the gateway): a PopART pipeline's every cycle, a step's
                               end (gcl_sim_host_exchange) */
    uint64_t reduction_buffer_bytes;   /* the gradient bytes one reduction call carries: the step's
                                          gradient is reduced in ceil(bytes / this) calls (at most
                                          one per weight tensor), each 2(n-1) synchronised ring
                                          steps (software: the framework's gradient fusion) */
    uint64_t gateway_domain_bandwidth; /* bytes/s at which one IPU-Link domain's traffic to the
                                          other domains leaves it (through its gateways) */
    uint64_t gateway_ipu_bandwidth;    /* bytes/s of one IPU's hop to its gateway (PCIe) */
    /* Compute (assumed). */
    double vector_efficiency;   /* fraction of the vector units' peak in elementwise work */
    double exchange_efficiency; /* fraction of the exchange bandwidth a compiled exchange gets */
    sim_time_t compute_set_overhead; /* ps: launching one compute set's vertices on every tile */
    sim_time_t tile_sync;            /* ps: one synchronisation of the 1472 tiles */
    uint32_t amp_k_group[SIM_PREC_COUNT];  /* AMP input-channel group (k padding) per precision */
    uint32_t amp_n_group;                  /* AMP output-channel group (n padding) */
    uint32_t vector_lanes[SIM_PREC_COUNT]; /* vector operations per tile per cycle */
    /* Memory (assumed). */
    uint64_t code_bytes_per_tile;  /* code, stacks and exchange code every program has */
    uint64_t code_bytes_per_layer; /* per tile, per layer: its vertices, descriptors, exchanges */
    /* Host, gateway and streaming memory. */
    int host_servers;             /* host servers feeding the job; 0: one per 16 IPUs */
    uint64_t host_nic_bandwidth;  /* bytes/s of one host server's RoCE NIC */
    uint64_t gateway_bandwidth;   /* bytes/s into one IPU-M2000 (its RoCE NIC) */
    uint32_t prefetch_depth;      /* micro-batches the host may prepare ahead */
    uint64_t streaming_bandwidth; /* bytes/s between one IPU and its Streaming Memory */
} sim_cost_params_t;

/* The defaults (calibrated; every one sourced or assumed in sim/src/device/params.c). */
void sim_cost_params_default(sim_cost_params_t *cp);

typedef enum sim_param_kind {
    SIM_PARAM_SOURCED = 0, /* from a datasheet, a Graphcore document or a paper */
    SIM_PARAM_ASSUMED,     /* no published figure: our estimate, with a range */
    SIM_PARAM_FITTED,      /* calibrated against the figures docs/validation.md names */
} sim_param_kind_t;

typedef enum sim_param_unit {
    SIM_UNIT_FRACTION = 0, /* a ratio, 0.001 .. 1 */
    SIM_UNIT_NS,           /* nanoseconds */
    SIM_UNIT_GBS,          /* GB/s, 10^9 bytes/s */
    SIM_UNIT_BYTES,
    SIM_UNIT_COUNT,
} sim_param_unit_t;

typedef struct sim_param_info {
    const char *key; /* the topology-file key */
    sim_param_kind_t kind;
    sim_param_unit_t unit;
    double value;       /* the default, in UNIT */
    double lo, hi;      /* believed range (sourced: the value itself) */
    int topology;       /* 1: a link or sync constant of the topology, 0: of the cost model */
    const char *source; /* one line: where the value comes from */
} sim_param_info_t;

size_t sim_param_count(void);
/* The I-th parameter, or NULL past the end. */
const sim_param_info_t *sim_param_get(size_t i);
/* The parameter called KEY, or NULL. */
const sim_param_info_t *sim_param_find(const char *key);
/* "sourced", "assumed", "fitted"; and "", "ns", "GB/s", "bytes", "" for the units. */
const char *sim_param_kind_name(sim_param_kind_t k);
const char *sim_param_unit_name(sim_param_unit_t u);

/* Sets cost-model parameter KEY (topology == 0) of CP from MILLI thousandths of its unit (the
 * topology parser's exact decimals). Returns 0; -ENOENT for a key that is not a cost-model
 * parameter; -ERANGE when the value is outside what the model accepts (fractions 0.001..1,
 * counts and bytes whole and at least 1, host_servers and the byte sizes may be 0). */
int sim_cost_param_set_milli(sim_cost_params_t *cp, const char *key, uint64_t milli);

/* The value of cost-model parameter KEY in CP, in its unit; -1 for an unknown key. */
double sim_cost_param_value(const sim_cost_params_t *cp, const char *key);

/* The device CP names (the GC200 or the Bow IPU). */
const sim_device_t *sim_cost_params_device(const sim_cost_params_t *cp);

/* Whether A and B hold the same value of every cost-model parameter and the same device. */
int sim_cost_params_equal(const sim_cost_params_t *a, const sim_cost_params_t *b);

#endif /* SIM_PARAMS_H */
