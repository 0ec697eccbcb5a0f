/*
 * libFuzzer target: gcl_wire_decode, the check a receiver makes of every network message header
 * (gcl/src/transport/wire.c) before it trusts any byte of it. Built from wire.c and collectives' types.c
 * alone (see run.sh).
 *
 * Input: one mode byte, then the bytes that arrive. Mode bit 0 set: the bytes are laid over a
 * header that carries the job's token, so that the fuzzer explores the checks behind the token;
 * clear: the bytes are taken as they are (a stranger's message, almost always refused at the
 * token). The decoder must never read past the length it is given, and what it accepts must be
 * a header that can exist.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/types.h"
#include "transport/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t job_token[16] = {0x47, 0x43, 0x4c, 0x21, 0x10, 0x32, 0x54, 0x76,
                                      0x98, 0xba, 0xdc, 0xfe, 0x01, 0x23, 0x45, 0x67};

static void check_accepted(const gcl_wire_header_t *h)
{
    const gcl_sig_t *s = &h->sig;
    int p2p = s->coll == 0xff;
    if (memcmp(h->token, job_token, 16) != 0 || (!p2p && s->coll >= COLL_COLLECTIVE_COUNT) ||
        s->dtype >= COLL_DTYPE_COUNT || s->op >= COLL_REDOP_COUNT || s->gkind > 2 ||
        (!p2p && (s->gsize < 1 || s->root < -1 || s->root >= s->gsize)) ||
        h->total % coll_dtype_size((coll_dtype_t)s->dtype) != 0 || h->sim_time < h->sim_send)
        abort(); /* accepted a header that cannot exist */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    /* A copy of exactly SIZE bytes on the heap, so that AddressSanitizer sees any read past it. */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    if ((mode & 1) && size >= offsetof(gcl_wire_header_t, token) + 16)
        memcpy(buf + offsetof(gcl_wire_header_t, token), job_token, 16);
    gcl_wire_header_t out;
    char why[160];
    memset(why, 'x', sizeof why);
    int rc = gcl_wire_decode(size ? buf : NULL, size, job_token, &out, why, sizeof why);
    if (rc == 0)
        check_accepted(&out);
    else if (rc != -1 || memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
        abort(); /* a refusal must come with a sentence */
    /* A short WHY buffer is never overrun. */
    char tiny[4];
    gcl_wire_decode(size ? buf : NULL, size, job_token, &out, tiny, sizeof tiny);
    free(buf);
    return 0;
}
