/*
 * Integer time arithmetic (sim/base/time.h).
 */
#include "sim/base/time.h"

#include <stdio.h>

/* 128-bit intermediates make "a * b / c" exact for 64-bit a, b, c. GCC and Clang both have it;
 * __extension__ keeps -pedantic builds quiet. */
__extension__ typedef unsigned __int128 u128;

/* ceil(a * b / c) saturated to UINT64_MAX; c must not be 0. */
static uint64_t muldiv_ceil(uint64_t a, uint64_t b, uint64_t c)
{
    u128 p = (u128)a * b;
    u128 q = p / c + (p % c != 0);

    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* floor(a * b / c) saturated to UINT64_MAX; c must not be 0. */
static uint64_t muldiv_floor(uint64_t a, uint64_t b, uint64_t c)
{
    u128 q = (u128)a * b / c;

    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

sim_time_t sim_xfer_time(uint64_t bytes, uint64_t bytes_per_s)
{
    if (bytes == 0)
        return 0;
    if (bytes_per_s == 0)
        return SIM_TIME_MAX;
    return muldiv_ceil(bytes, SIM_PS_PER_S, bytes_per_s);
}

uint64_t sim_time_to_cycles(sim_time_t t, uint64_t clock_hz)
{
    return muldiv_floor(t, clock_hz, SIM_PS_PER_S);
}

sim_time_t sim_cycles_to_time(uint64_t cycles, uint64_t clock_hz)
{
    if (cycles == 0)
        return 0;
    if (clock_hz == 0)
        return SIM_TIME_MAX;
    return muldiv_ceil(cycles, SIM_PS_PER_S, clock_hz);
}

int sim_time_format_us(sim_time_t t, char *buf, size_t len)
{
    return snprintf(buf, len, "%llu.%06llu", (unsigned long long)(t / SIM_PS_PER_US),
                    (unsigned long long)(t % SIM_PS_PER_US));
}
