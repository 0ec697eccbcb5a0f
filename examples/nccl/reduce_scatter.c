/* reduce_scatter_perf: rank r gets block r of the reduction; each rank sends n blocks of
 * count/n elements. busbw = algbw x (n-1)/n, algbw over the n blocks. */
#include "common/ref.h"
#include "nccl.h"

static void counts(size_t count, int n, size_t *send, size_t *recv, size_t *param, size_t *si,
                   size_t *ri)
{
    size_t block = count / (size_t)n;
    *send = block * (size_t)n;
    *recv = *param = block;
    *si = 0;
    *ri = block; /* in place: rank r's block of the input */
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
    static const nccl_coll_t tool = {
        "reduce_scatter_perf", REF_REDUCE_SCATTER, 1, 0, counts, bus_factor, alg_bytes};
    return nccl_main(&tool, argc, argv);
}
