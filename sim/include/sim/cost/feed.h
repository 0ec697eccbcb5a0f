/*
 * The host and gateway data feed: how fast host servers deliver samples to the IPUs.
 *
 * A job of R replicas on I IPUs is fed by H host servers (cost parameter host_servers, or one
 * per 16 IPUs when it is 0). Samples flow host -> host NIC (100 GbE RoCEv2) -> the network ->
 * the IPU-M2000's RoCE NIC and gateway -> the IPUs. The job's rate is the slowest of
 *     preprocessing   H x (the model's samples/s per host server)
 *     host NICs       H x host_nic_bandwidth / bytes per sample
 *     gateways        ceil(I / 4) x gateway_bandwidth / bytes per sample
 * and every replica gets 1/R of it: one sample every t = R / rate seconds (whole picoseconds,
 * rounded up), as a steady stream.
 *
 * A replica's stream prepares micro-batch j of m samples in m t; it starts as soon as the one
 * before is done and the IPU has taken micro-batch j - D (the host works at most D =
 * prefetch_depth micro-batches ahead). The IPU taking micro-batch j at time `now` waits until
 * it is ready: that wait is host time, reported apart from compute, exchange, sync and idle.
 */
#ifndef SIM_FEED_H
#define SIM_FEED_H

#include <stdint.h>

#include "sim/device/params.h"
#include "sim/base/time.h"

#define SIM_FEED_MAX_DEPTH 64

typedef enum sim_feed_limit {
    SIM_FEED_NONE = 0,   /* nothing to feed (no bytes and no preprocessing rate) */
    SIM_FEED_PREPROCESS, /* the host servers' preprocessing */
    SIM_FEED_HOST_NIC,   /* the host servers' NICs */
    SIM_FEED_GATEWAY,    /* the IPU-M2000s' RoCE NICs */
} sim_feed_limit_t;

const char *sim_feed_limit_name(sim_feed_limit_t l);

/* The job's feed rate in samples/s (see the top): HOST_RATE samples/s per host server (0: not
 * limiting), BYTES per sample, on IPUS IPUs. *LIMIT says which term binds. Returns the rate, or
 * 0 when nothing limits (then there is no wait). */
double sim_feed_rate(const sim_cost_params_t *cp, uint64_t host_rate, uint64_t bytes, int ipus,
                     sim_feed_limit_t *limit);

/* The host servers feeding IPUS IPUs: cp->host_servers, or ceil(ipus / 16) when that is 0. */
int sim_feed_servers(const sim_cost_params_t *cp, int ipus);

typedef struct sim_feed {
    sim_time_t per_sample; /* 0: never waits */
    uint32_t depth;
    uint64_t count;                       /* micro-batches taken */
    sim_time_t ready;                     /* when the last prepared micro-batch was done */
    sim_time_t taken[SIM_FEED_MAX_DEPTH]; /* when micro-batch j was taken, at j % depth */
} sim_feed_t;

/* A stream for one of REPLICAS replicas at the job rate RATE (samples/s; 0: never waits). */
void sim_feed_init(sim_feed_t *f, double rate, int replicas, uint32_t depth);

/* The IPU takes the next micro-batch of SAMPLES at time NOW: returns when it is ready (NOW or
 * later). */
sim_time_t sim_feed_take(sim_feed_t *f, sim_time_t now, uint64_t samples);

#endif /* SIM_FEED_H */
