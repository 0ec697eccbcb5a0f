/*
 * The soak's inputs and exact checks, fast enough for a gigabyte a case.
 *
 * Element i of the input of IPU (replica m, position pos) is the small integer
 *     v(m, pos, i) = ((i + 7m + 3pos) mod 31) - 15,
 * stored in the case's type. Every sum of up to 8 of them is an integer of at most 120 in size,
 * which f32, f16 and bf16 all hold exactly, so every fold order gives the one exact answer. An
 * output is then periodic in the element index with period 31 (a prime: no chunk, frame or
 * block of a power-of-two size is a multiple of it, so a piece landing at the wrong offset
 * shows), and is checked a run of 31 x K elements at a time with memcmp against a tile of the
 * expected period, at memory speed.
 */
#ifndef SOAK_PATTERN_H
#define SOAK_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "gcl/types.h"

enum { PAT_PERIOD = 31, PAT_MEMBERS_MAX = 64 };

/* One period of expected elements, encoded in the case's type, and a tile of it repeated. */
typedef struct {
    gcl_dtype_t t;
    size_t es;
    double v[PAT_PERIOD];
    unsigned char *tile; /* (K + 1) periods, so that a run of K periods starts at any phase */
    size_t tile_periods;
} pat_t;

/* The input value of (M, POS) at element I, as a double. */
double pat_value(int m, int pos, uint64_t i);

/* A pattern whose element i is V[i mod 31] (filled by the caller through pat_set_*). */
void pat_set_input(pat_t *p, gcl_dtype_t t, int m, int pos);
/* The reduction with OP (sum or max) over the (MEMBERS[k], POS) inputs. */
void pat_set_reduced(pat_t *p, gcl_dtype_t t, gcl_redop_t op, const int *members, int n, int pos);
/* Encodes V[] into the tile; returns 0, or -1 out of memory. */
int pat_build(pat_t *p);
void pat_free(pat_t *p);

/* Writes elements [FIRST, FIRST + N) of pattern P (phase FIRST mod 31) to BUF. */
void pat_fill(const pat_t *p, void *buf, uint64_t first, size_t n);
/* Compares N elements at BUF with elements [FIRST, FIRST + N) of P. Returns the index (from
 * BUF) of the first that differs, or N when all agree. */
size_t pat_check(const pat_t *p, const void *buf, uint64_t first, size_t n);

/* Encodes V (a small integer) as one element of T at OUT. */
void pat_store(void *out, gcl_dtype_t t, double v);

#endif
