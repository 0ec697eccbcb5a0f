/*
 * Integer time arithmetic and the small helpers every sim/ source shares.
 */
#include "sim/time.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"

void sim_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

uint64_t sim_muldiv_ceil(uint64_t a, uint64_t b, uint64_t c)
{
    sim_u128 p = (sim_u128)a * b;
    sim_u128 q = p / c + (p % c != 0);

    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

uint64_t sim_muldiv_floor(uint64_t a, uint64_t b, uint64_t c)
{
    sim_u128 q = (sim_u128)a * b / c;

    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

void sim_strlcpy(char *dst, const char *src, size_t len)
{
    size_t n = strlen(src);

    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

sim_time_t sim_xfer_time(uint64_t bytes, uint64_t bytes_per_s)
{
    if (bytes == 0)
        return 0;
    if (bytes_per_s == 0)
        return SIM_TIME_MAX;
    return sim_muldiv_ceil(bytes, SIM_PS_PER_S, bytes_per_s);
}

uint64_t sim_time_to_cycles(sim_time_t t, uint64_t clock_hz)
{
    return sim_muldiv_floor(t, clock_hz, SIM_PS_PER_S);
}

sim_time_t sim_cycles_to_time(uint64_t cycles, uint64_t clock_hz)
{
    if (cycles == 0)
        return 0;
    if (clock_hz == 0)
        return SIM_TIME_MAX;
    return sim_muldiv_ceil(cycles, SIM_PS_PER_S, clock_hz);
}

int sim_time_format_us(sim_time_t t, char *buf, size_t len)
{
    return snprintf(buf, len, "%llu.%06llu", (unsigned long long)(t / SIM_PS_PER_US),
                    (unsigned long long)(t % SIM_PS_PER_US));
}
