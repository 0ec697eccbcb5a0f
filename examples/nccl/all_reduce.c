/* all_reduce_perf: every rank gets the reduction of every rank's buffer of count elements.
 * busbw = algbw x 2(n-1)/n (nccl-tests' doc/PERFORMANCE.md: each rank sends and receives
 * 2(n-1)/n of the data in the best algorithm). */
#include "common/ref.h"
#include "nccl.h"

static void counts(size_t count, int n, size_t *send, size_t *recv, size_t *param, size_t *si,
                   size_t *ri)
{
    (void)n;
    *send = *recv = *param = count;
    *si = *ri = 0;
}

static double bus_factor(int n)
{
    return 2.0 * (n - 1) / n;
}

static double alg_bytes(size_t param, size_t es, int n)
{
    (void)n;
    return (double)param * (double)es;
}

int main(int argc, char **argv)
{
    static const nccl_coll_t tool = {"all_reduce_perf", REF_ALL_REDUCE, 1, 0, counts,
                                     bus_factor,        alg_bytes};
    return nccl_main(&tool, argc, argv);
}
