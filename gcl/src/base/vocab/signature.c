/* Call signatures; see signature.h. */
#include "base/vocab/signature.h"

#include <stdio.h>

#include "coll/group.h"
#include "coll/types.h"

void gcl_sig_describe(const gcl_sig_t *s, char *buf, size_t len)
{
    char g[32];
    coll_group_t grp = {(coll_group_kind_t)s->gkind, s->gsize};
    coll_group_format(grp, g, sizeof g);
    char tl[32] = ""; /* a gcl_all_reduce_multi call's tensor list */
    if (s->listhash)
        snprintf(tl, sizeof tl, ", tensor list %08x", s->listhash);
    if (s->coll == GCL_SIG_P2P)
        snprintf(buf, len, "send/recv #%u of %llu x %s", s->seq, (unsigned long long)s->count,
                 coll_dtype_name((coll_dtype_t)s->dtype));
    else
        snprintf(buf, len, "%s #%u of %llu x %s, op %s, root %d, group %s (algorithm %08x%s)",
                 coll_collective_name((coll_collective_t)s->coll), s->seq,
                 (unsigned long long)s->count, coll_dtype_name((coll_dtype_t)s->dtype),
                 coll_redop_name((coll_redop_t)s->op), s->root, g, s->algo, tl);
}

uint32_t gcl_hash_ints(const int *v, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) {
        uint32_t x = (uint32_t)v[i];
        for (int b = 0; b < 4; b++) {
            h ^= (x >> (8 * b)) & 0xffu;
            h *= 16777619u;
        }
    }
    return h;
}

uint32_t gcl_sig_hash(const char *name)
{
    int v[16] = {0};
    for (int i = 0; name[i] && i < 64; i++)
        v[i % 16] = v[i % 16] * 31 + (unsigned char)name[i];
    return gcl_hash_ints(v, 16);
}
