/*
 * The GC200 device preset and the roofline compute cost.
 *
 * Sources for the preset (each number below repeats its own):
 *   [GC200]  Graphcore, "Colossus Mk2 GC200 IPU" product page (graphcore.ai/products/ipu), as
 *            quoted e.g. by thecharlieblake.co.uk/ipus and cambrian-ai.com: 1472 tiles, 900 MB
 *            In-Processor-Memory, 47.5 TB/s memory bandwidth, 8 TB/s IPU-Exchange, 10 IPU-Links
 *            with 320 GB/s together, PCIe Gen4 x16 at 64 GB/s, 250 TFLOPS FP16.16, 62.5 TFLOPS
 *            FP32.
 *   [POD64]  Graphcore, "IPU-POD64 datasheet" (docs.graphcore.ai/projects/ipu-pod64-datasheet):
 *            15.978 PFLOPS FP16.16 and 3.994 PFLOPS FP32 for 64 GC200s, i.e. 249.7 and 62.4
 *            TFLOPS per IPU, which agrees with [GC200].
 *   [PG]     Graphcore, "IPU Programmer's Guide", tile architecture: 624 KB of SRAM per tile on
 *            the Mk2 IPU; 1472 * 624 KiB = 897 MiB, the "900 MB" of [GC200].
 */
#include "sim/device.h"

#include <strings.h>

#include "text.h"

static const sim_device_t gc200 = {
    .name = "GC200",
    .tiles = 1472,                  /* [GC200] */
    .sram_per_tile = 624ULL * 1024, /* [PG] */
    /* Derived, not published as such: 250 TFLOPS / (1472 tiles * 128 f16 FLOP per cycle, the
     * 64-MAC AMP unit of each tile) = 1.327 GHz; 1.33 GHz is the commonly quoted figure. */
    .clock_hz = 1330000000ULL,
    .peak_flops =
        {
            [SIM_PREC_F16] = 250000000000000ULL, /* [GC200], [POD64] */
            [SIM_PREC_F32] = 62500000000000ULL,  /* [GC200], [POD64] */
        },
    .sram_bandwidth = 47500000000000ULL,    /* [GC200]: 47.5 TB/s */
    .exchange_bandwidth = 8000000000000ULL, /* [GC200]: 8 TB/s */
    .host_link_bandwidth = 64000000000ULL,  /* [GC200]: PCIe Gen4 x16, 64 GB/s */
    .ipu_links = 10,                        /* [GC200] */
    .ipu_links_bandwidth = 320000000000ULL, /* [GC200]: 320 GB/s */
};

const sim_device_t *sim_device_gc200(void)
{
    return &gc200;
}

const sim_device_t *sim_device_preset(const char *name)
{
    if (name != NULL && strcasecmp(name, gc200.name) == 0)
        return &gc200;
    return NULL;
}

uint64_t sim_device_memory(const sim_device_t *d)
{
    return (uint64_t)d->tiles * d->sram_per_tile;
}

sim_time_t sim_device_compute_time(const sim_device_t *d, sim_precision_t p, uint64_t flops,
                                   uint64_t bytes)
{
    uint64_t rate;

    if ((int)p < 0 || p >= SIM_PREC_COUNT)
        p = SIM_PREC_F32;
    rate = d->peak_flops[p];
    return sim_time_max(sim_xfer_time(flops, rate), sim_xfer_time(bytes, d->sram_bandwidth));
}

sim_time_t sim_device_exchange_time(const sim_device_t *d, uint64_t bytes)
{
    return sim_xfer_time(bytes, d->exchange_bandwidth);
}

sim_time_t sim_device_host_time(const sim_device_t *d, uint64_t bytes)
{
    return sim_xfer_time(bytes, d->host_link_bandwidth);
}

uint64_t sim_device_cycles(const sim_device_t *d, sim_time_t t)
{
    return sim_time_to_cycles(t, d->clock_hz);
}
