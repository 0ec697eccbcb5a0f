/* broadcast_perf: every rank gets the root's count elements (-r picks the root, -r all each in
 * turn). busbw = algbw. */
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
    (void)n;
    return 1.0;
}

static double alg_bytes(size_t param, size_t es, int n)
{
    (void)n;
    return (double)param * (double)es;
}

int main(int argc, char **argv)
{
    static const nccl_coll_t tool = {"broadcast_perf", REF_BROADCAST, 0,        1,
                                     counts,           bus_factor,    alg_bytes};
    return nccl_main(&tool, argc, argv);
}
