/*
 * allreduce-check's data: inputs made from the replica index so that the exact result of every
 * operator is known whatever the reduction order, and the reference computed independently of
 * libgcl (its own replica-group arithmetic).
 *
 * Element i of replica r is ((7r + i) mod 9) - 4: small integers, exact in f16 and f32 and in
 * every sum of up to 512 replicas. Element i of the result depends only on i mod 9.
 */
#ifndef CHECK_VALUES_H
#define CHECK_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "gcl/gcl.h"

typedef struct {
    double want[9]; /* expected value of elements with i mod 9 == k */
} check_result_t;

void check_fill(void *buf, gcl_dtype_t type, size_t count, int replica);
/* The expected result for REPLICA's group under GROUP over NREPLICAS replicas. */
void check_expected(check_result_t *r, gcl_comm_t comm, gcl_group_t group, int nreplicas,
                    int replica, gcl_dtype_t type, gcl_redop_t op);
/* Index of the first element that differs from the expected result, or SIZE_MAX. */
size_t check_compare(const void *buf, gcl_dtype_t type, size_t count, const check_result_t *r);
double check_element(const void *buf, gcl_dtype_t type, size_t i);
double check_want(const check_result_t *r, size_t i);
/* FNV-1a over the bytes, eight at a time. */
uint64_t check_hash(const void *buf, size_t bytes);

#endif
