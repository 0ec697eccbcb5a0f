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
 *   [BOW]    Graphcore, "Bow-2000 datasheet" (docs.graphcore.ai/projects/bow-2000-datasheet):
 *            4 Bow IPUs, 1.4 petaFLOPS FP16.16, 5,888 processor cores, 3.6 GB
 *            In-Processor-Memory, IPU-Link 512 Gbps, GW-Link 2 x 100 Gbps, Host-Link PCIe Gen4
 *            RoCEv2; "backwards compatible with the IPU-M2000".
 *   [BOWPOD] Graphcore, "Bow Pod256 datasheet" (docs.graphcore.ai/projects/bow-pod256-
 *            datasheet): 89.23 petaFLOPS FP16.16 and 22.31 petaFLOPS FP32 for 256 Bow IPUs, i.e.
 *            348.6 and 87.1 TFLOPS per IPU.
 */
#include "sim/device/device.h"

#include <strings.h>

#include "base/text.h"

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

/* The Bow IPU: the GC200's tiles and memory at a higher clock. Its clock is derived as the
 * GC200's: [BOWPOD]'s 89.23 PFLOPS / 256 IPUs / (1472 tiles * 128 f16 FLOP per cycle) = 1.850
 * GHz (the commonly quoted 1.85 GHz); the peaks are that clock's. What scales with the clock and
 * is not published for Bow (SRAM bandwidth, on-chip exchange) is the GC200's figure times
 * 1.85 / 1.33. Off-chip links are the IPU-M2000's ([BOW]). */
static const sim_device_t bow = {
    .name = "Bow",
    .tiles = 1472,                  /* [BOW]: 5,888 cores / 4 */
    .sram_per_tile = 624ULL * 1024, /* [BOW]: 3.6 GB / 4 = the GC200's 900 MB */
    .clock_hz = 1850000000ULL,
    .peak_flops =
        {
            [SIM_PREC_F16] = 348569600000000ULL, /* 1472 * 128 * 1.85 GHz; [BOWPOD] 348.6 */
            [SIM_PREC_F32] = 87142400000000ULL,  /* 1472 * 32 * 1.85 GHz; [BOWPOD] 87.1 */
        },
    .sram_bandwidth = 66071428571428ULL,     /* 47.5 TB/s * 1.85 / 1.33 */
    .exchange_bandwidth = 11127819548872ULL, /* 8 TB/s * 1.85 / 1.33 */
    .host_link_bandwidth = 64000000000ULL,   /* [BOW]: PCIe Gen4 */
    .ipu_links = 10,
    .ipu_links_bandwidth = 320000000000ULL, /* [BOW]: IPU-Link 512 Gbps, as the M2000's */
};

const sim_device_t *sim_device_gc200(void)
{
    return &gc200;
}

const sim_device_t *sim_device_bow(void)
{
    return &bow;
}

const sim_device_t *sim_device_preset(const char *name)
{
    if (name != NULL && strcasecmp(name, gc200.name) == 0)
        return &gc200;
    if (name != NULL && strcasecmp(name, bow.name) == 0)
        return &bow;
    return NULL;
}

sim_time_t sim_device_cycles_of_gc200(const sim_device_t *d, sim_time_t gc200_ps)
{
    if (d->clock_hz == gc200.clock_hz)
        return gc200_ps;
    return (sim_time_t)((unsigned __int128)gc200_ps * gc200.clock_hz / d->clock_hz);
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
