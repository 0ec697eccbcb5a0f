/*
 * Simulated time: one unit for the whole sim/ library.
 *
 * Every simulated time and duration is a sim_time_t, an unsigned 64-bit count of picoseconds.
 * Integers, not doubles, so that a simulated time is a pure function of the program and its
 * configuration: the same run gives bitwise the same times on any host, at any load, with any
 * compiler flags. 2^64 ps is about 213 days of simulated time; arithmetic here saturates at
 * SIM_TIME_MAX rather than wrapping, so an absurd input gives an absurd but ordered answer.
 *
 * Rates (bandwidths, FLOP rates) are unsigned 64-bit integers per second. A duration derived
 * from a rate is rounded UP to the next picosecond, so it is never zero for non-zero work.
 */
#ifndef SIM_TIME_H
#define SIM_TIME_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t sim_time_t;

#define SIM_TIME_MAX  UINT64_MAX
#define SIM_PS_PER_NS UINT64_C(1000)
#define SIM_PS_PER_US UINT64_C(1000000)
#define SIM_PS_PER_MS UINT64_C(1000000000)
#define SIM_PS_PER_S  UINT64_C(1000000000000)

/* a + b, saturating at SIM_TIME_MAX. */
static inline sim_time_t sim_time_add(sim_time_t a, sim_time_t b)
{
    return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

static inline sim_time_t sim_time_max(sim_time_t a, sim_time_t b)
{
    return a > b ? a : b;
}

/* The time to move BYTES at BYTES_PER_S: ceil(bytes * 10^12 / bytes_per_s) picoseconds,
 * saturating. A rate of 0 gives SIM_TIME_MAX (nothing ever arrives); 0 bytes give 0. */
sim_time_t sim_xfer_time(uint64_t bytes, uint64_t bytes_per_s);

/* Whole cycles of a CLOCK_HZ clock elapsed in T: floor(t * clock_hz / 10^12), saturating. */
uint64_t sim_time_to_cycles(sim_time_t t, uint64_t clock_hz);

/* The duration of CYCLES cycles of a CLOCK_HZ clock, rounded up to a picosecond, saturating.
 * A clock of 0 gives SIM_TIME_MAX. */
sim_time_t sim_cycles_to_time(uint64_t cycles, uint64_t clock_hz);

/* Writes T as microseconds with exactly six decimals ("12.000345"), the unit of Chrome traces.
 * Exact (no floating point). Returns what snprintf returns. */
int sim_time_format_us(sim_time_t t, char *buf, size_t len);

#endif /* SIM_TIME_H */
