/* Checking the header of a network message; see wire.h. The fuzzer in tests/faults feeds it
 * arbitrary bytes. */
#include "transport/wire.h"

#include <stdio.h>
#include <string.h>

#include "coll/types.h"

static int refuse(char *why, size_t n, const char *text)
{
    if (why && n)
        snprintf(why, n, "%s", text);
    return -1;
}

int gcl_wire_decode(const void *buf, size_t len, const uint8_t token[16], gcl_wire_header_t *out,
                    char *why, size_t n)
{
    gcl_wire_header_t h;
    if (!buf || len != sizeof h)
        return refuse(why, n, "a message header of the wrong size");
    memcpy(&h, buf, sizeof h);
    /* The token first: nothing else of a stranger's message is looked at. */
    unsigned diff = 0;
    for (int i = 0; i < 16; i++)
        diff |= (unsigned)(h.token[i] ^ token[i]);
    if (diff)
        return refuse(why, n, "a message that does not carry this job's token");
    const gcl_sig_t *s = &h.sig;
    int p2p = s->coll == 0xff;
    if (!p2p && s->coll >= COLL_COLLECTIVE_COUNT)
        return refuse(why, n, "a message header naming an unknown collective");
    if (s->dtype >= COLL_DTYPE_COUNT || s->op >= COLL_REDOP_COUNT || s->gkind > 2)
        return refuse(why, n, "a message header naming an unknown type, operator or group");
    if (!p2p && (s->gsize < 1 || s->gsize > (1 << 20) || s->root < -1 || s->root >= s->gsize))
        return refuse(why, n, "a message header with an impossible group or root");
    size_t es = coll_dtype_size((coll_dtype_t)s->dtype);
    if (h.total > ((uint64_t)1 << 48) || h.total % es != 0 || s->count > ((uint64_t)1 << 48))
        return refuse(why, n, "a message header with an impossible size");
    if (h.sim_time < h.sim_send)
        return refuse(why, n, "a message header that arrives before it was sent");
    *out = h;
    return 0;
}
