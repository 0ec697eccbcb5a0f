/*
 * Inputs and independent references for checking collectives (coll-matrix, gcl-bench --check).
 * Inputs are small integers (or 0/1 for bool), so that every reduction order gives the same exact
 * answer in every type; references fold the group's inputs in double and encode the result with
 * conversions of their own (the compiler's _Float16 for f16), sharing nothing with the library
 * under test.
 */
#ifndef EXAMPLES_REF_H
#define EXAMPLES_REF_H

#include <stddef.h>
#include <stdint.h>

#include "gcl/gcl.h"

/* Element I of replica R's input, as a double. */
double mref_value(int r, size_t i, gcl_dtype_t t, gcl_redop_t op);
/* Writes V as one element of type T at P. */
void mref_store(void *p, gcl_dtype_t t, double v);
/* Fills N elements of replica R's input starting at element FIRST of its input buffer. */
void mref_fill(void *buf, gcl_dtype_t t, gcl_redop_t op, int r, size_t first, size_t n);
/* The reduction with OP over the replicas MEMBERS[0..N) of their element I, in double. */
double mref_reduce(const int *members, int n, size_t i, gcl_dtype_t t, gcl_redop_t op);
/* Whether OP is valid on T (mirrors the documented table in gcl/types.h). */
int mref_valid(gcl_dtype_t t, gcl_redop_t op);

/* The collectives, in the order of their names. */
enum {
    REF_ALL_REDUCE,
    REF_REDUCE_SCATTER,
    REF_ALL_GATHER,
    REF_BROADCAST,
    REF_ALL_TO_ALL,
    REF_BARRIER,
    REF_NCOLL
};
extern const char *const ref_collectives[REF_NCOLL];
/* The index of collective NAME, or -1. */
int ref_collective(const char *name);

/* The replicas of REPLICA's group, by the definitions in gcl/types.h; returns their number. */
int ref_members(gcl_group_t g, int nreplicas, int replica, int *out);

/* Elements in one rank's input and output of collective COLL with COUNT (as in gcl.h) over N. */
void ref_sizes(int coll, size_t count, int n, size_t *in, size_t *out);

/* The expected element I of rank RANK's output, when every rank's input is made by mref_fill. */
double ref_expect(int coll, gcl_dtype_t t, gcl_redop_t op, size_t count, int root,
                  const int *members, int n, int rank, size_t i);

#endif
