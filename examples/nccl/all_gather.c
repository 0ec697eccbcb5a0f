/* all_gather_perf: every rank gets every rank's block of count/n elements.
 * busbw = algbw x (n-1)/n, algbw over the n blocks. */
#include "common/ref.h"
#include "nccl.h"

static void counts(size_t count, int n, size_t *send, size_t *recv, size_t *param, size_t *si,
                   size_t *ri)
{
    size_t block = count / (size_t)n;
    *send = *param = block;
    *recv = block * (size_t)n;
    *si = block; /* in place: rank r's block of the output */
    *ri = 0;
}

static double bus_factor(int n)
{
    return (double)(n - 1) / n;
}

static double alg_bytes(size_t param, size_t es, int n)
{
    return (double)param * (double)es * n;
}

int main(int argc, char **argv)
{
    static const nccl_coll_t tool = {"all_gather_perf", REF_ALL_GATHER, 0, 0, counts,
                                     bus_factor,        alg_bytes};
    return nccl_main(&tool, argc, argv);
}
