/*
 * The host and gateway data feed (sim/cost/feed.h).
 */
#include "sim/cost/feed.h"

#include <math.h>
#include <string.h>

const char *sim_feed_limit_name(sim_feed_limit_t l)
{
    switch (l) {
    case SIM_FEED_PREPROCESS:
        return "host preprocessing";
    case SIM_FEED_HOST_NIC:
        return "host NICs";
    case SIM_FEED_GATEWAY:
        return "gateways";
    default:
        return "none";
    }
}

int sim_feed_servers(const sim_cost_params_t *cp, int ipus)
{
    if (cp->host_servers > 0)
        return cp->host_servers;
    return ipus > 0 ? (ipus + 15) / 16 : 1;
}

double sim_feed_rate(const sim_cost_params_t *cp, uint64_t host_rate, uint64_t bytes, int ipus,
                     sim_feed_limit_t *limit)
{
    double servers = sim_feed_servers(cp, ipus), gateways = ipus > 0 ? (ipus + 3) / 4 : 1;
    double rate = 0;

    *limit = SIM_FEED_NONE;
    if (host_rate > 0) {
        rate = servers * (double)host_rate;
        *limit = SIM_FEED_PREPROCESS;
    }
    if (bytes > 0) {
        double nic = servers * (double)cp->host_nic_bandwidth / (double)bytes;
        double gw = gateways * (double)cp->gateway_bandwidth / (double)bytes;

        if (*limit == SIM_FEED_NONE || nic < rate) {
            rate = nic;
            *limit = SIM_FEED_HOST_NIC;
        }
        if (gw < rate) {
            rate = gw;
            *limit = SIM_FEED_GATEWAY;
        }
    }
    return rate;
}

void sim_feed_init(sim_feed_t *f, double rate, int replicas, uint32_t depth)
{
    memset(f, 0, sizeof(*f));
    f->depth = depth < 1 ? 1 : depth > SIM_FEED_MAX_DEPTH ? SIM_FEED_MAX_DEPTH : depth;
    if (rate > 0 && replicas > 0) {
        double ps = ceil((double)replicas * 1e12 / rate);

        f->per_sample = ps >= 1.8e19 ? SIM_TIME_MAX : (sim_time_t)ps;
    }
}

sim_time_t sim_feed_take(sim_feed_t *f, sim_time_t now, uint64_t samples)
{
    sim_time_t start = f->ready, ready, work;

    if (f->per_sample == 0) {
        f->count++;
        return now;
    }
    /* The host may not run more than DEPTH micro-batches ahead of the IPU. */
    if (f->count >= f->depth)
        start = sim_time_max(start, f->taken[f->count % f->depth]);
    work = samples > SIM_TIME_MAX / f->per_sample ? SIM_TIME_MAX : samples * f->per_sample;
    ready = sim_time_add(start, work);
    f->ready = ready;
    f->taken[f->count % f->depth] = sim_time_max(now, ready);
    f->count++;
    return sim_time_max(now, ready);
}
