/* alltoall_perf: block q of rank r's buffer (count/n elements) goes to block r of rank q's.
 * busbw = algbw x (n-1)/n, algbw over the n blocks. */
#include "common/ref.h"
#include "nccl.h"

static void counts(size_t count, int n, size_t *send, size_t *recv, size_t *param, size_t *si,
                   size_t *ri)
{
    size_t block = count / (size_t)n;
    *send = *recv = block * (size_t)n;
    *param = block;
    *si = *ri = 0;
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
    static const nccl_coll_t tool = {"alltoall_perf", REF_ALL_TO_ALL, 0,        0,
                                     counts,          bus_factor,     alg_bytes};
    return nccl_main(&tool, argc, argv);
}
