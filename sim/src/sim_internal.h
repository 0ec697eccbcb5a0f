/*
 * Helpers shared by the sim/ sources; not installed, not part of the API.
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* 128-bit intermediates make "a * b / c" exact for 64-bit a, b, c. GCC and Clang both have it;
 * __extension__ keeps -pedantic builds quiet. */
__extension__ typedef unsigned __int128 sim_u128;

/* Formats a one-line message into ERR when ERR is not NULL and ERRLEN > 0. */
void sim_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ceil(a * b / c) saturated to UINT64_MAX; c must not be 0. */
uint64_t sim_muldiv_ceil(uint64_t a, uint64_t b, uint64_t c);

/* floor(a * b / c) saturated to UINT64_MAX; c must not be 0. */
uint64_t sim_muldiv_floor(uint64_t a, uint64_t b, uint64_t c);

/* Copies SRC into DST (capacity LEN > 0), truncating, always NUL-terminated. */
void sim_strlcpy(char *dst, const char *src, size_t len);

#endif /* SIM_INTERNAL_H */
