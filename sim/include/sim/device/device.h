/*
 * The simulated IPU: a GC200 device model with a roofline compute cost.
 *
 * Every number of the preset names where it comes from, or says that it is assumed (see
 * sim/src/device/device.c and sim/README.md). No real memory is allocated anywhere in sim/: the device
 * only says how much SRAM an IPU has and how long work takes.
 *
 * Compute cost (roofline): work of F floating-point operations at precision P that moves B bytes
 * between the tiles and their SRAM takes
 *
 *     t = max( ceil(F * 10^12 / peak_flops[P]), ceil(B * 10^12 / sram_bandwidth) )  picoseconds,
 *
 * that is, whichever of arithmetic and memory traffic is the bottleneck, at peak rates.
 */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include <stdint.h>

#include "sim/base/time.h"

/* Precision of charged arithmetic. bf16 and f16 run at the same rate on the GC200 (both are
 * 16-bit AMP inputs), so callers charge bf16 as SIM_PREC_F16. */
typedef enum sim_precision { SIM_PREC_F16 = 0, SIM_PREC_F32 = 1, SIM_PREC_COUNT } sim_precision_t;

typedef struct sim_device {
    const char *name;                    /* "GC200" */
    uint32_t tiles;                      /* tiles (cores with their SRAM) per IPU */
    uint64_t sram_per_tile;              /* bytes of SRAM per tile */
    uint64_t clock_hz;                   /* tile clock */
    uint64_t peak_flops[SIM_PREC_COUNT]; /* FLOP/s of the whole IPU, per precision */
    uint64_t sram_bandwidth;             /* bytes/s between all tiles and their SRAM together */
    uint64_t exchange_bandwidth;         /* bytes/s of the on-chip all-to-all exchange */
    uint64_t host_link_bandwidth;        /* bytes/s per direction between the IPU and its host */
    uint32_t ipu_links;                  /* IPU-Links per IPU */
    uint64_t ipu_links_bandwidth;        /* bytes/s of all IPU-Links of one IPU together */
} sim_device_t;

/* The GC200 (Colossus Mk2) preset. Static storage; never NULL. */
const sim_device_t *sim_device_gc200(void);

/* The Bow IPU preset: the GC200's tiles and memory at 1.85 GHz (sim/src/device/device.c). */
const sim_device_t *sim_device_bow(void);

/* The preset called NAME (case-insensitive: "GC200" or "Bow"), or NULL. */
const sim_device_t *sim_device_preset(const char *name);

/* A time the cost model gives in nanoseconds of a GC200 (a fixed count of its cycles: a compute
 * set's launch, a tile sync) on device D: the same cycles at D's clock. Exact for the GC200. */
sim_time_t sim_device_cycles_of_gc200(const sim_device_t *d, sim_time_t gc200_ps);

/* SRAM of one IPU: tiles * sram_per_tile bytes (940,572,672 for the GC200, about 897 MiB). */
uint64_t sim_device_memory(const sim_device_t *d);

/* The roofline time of F flops at precision P that move B bytes to or from tile SRAM (see the
 * top of this header). An out-of-range P is charged at the slowest precision (f32). */
sim_time_t sim_device_compute_time(const sim_device_t *d, sim_precision_t p, uint64_t flops,
                                   uint64_t bytes);

/* Moving BYTES from tile to tile inside one IPU over the exchange: ceil(B * 10^12 / exchange). */
sim_time_t sim_device_exchange_time(const sim_device_t *d, uint64_t bytes);

/* Moving BYTES between the host and one IPU: ceil(B * 10^12 / host_link_bandwidth). */
sim_time_t sim_device_host_time(const sim_device_t *d, uint64_t bytes);

/* Whole tile-clock cycles in T (floor). */
uint64_t sim_device_cycles(const sim_device_t *d, sim_time_t t);

#endif /* SIM_DEVICE_H */
