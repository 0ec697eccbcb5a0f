/*
 * The header that starts every message of the network transports (mpi, ofi), and the check a
 * receiver makes of the bytes that arrive before trusting any of them.
 */
#ifndef GCL_WIRE_H
#define GCL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "base/vocab/signature.h"

typedef struct {
    uint64_t key0, key1;         /* the call and the message (see hostbox.h) */
    uint64_t total;              /* bytes of data that follow, in pieces */
    uint64_t sim_send, sim_time; /* simulated: sent, and arrives */
    uint8_t token[16];           /* the job's secret token */
    gcl_sig_t sig;               /* the call's signature */
} gcl_wire_header_t;

/*
 * Checks that the LEN bytes at BUF are a header of the job whose token is TOKEN, describing a
 * message that can exist: the exact size, a known collective (or point-to-point), type and
 * operator, a group of 1 .. 2^20, data of at most 2^48 bytes, and an arrival not before the
 * send. Copies it to *OUT. Returns 0, or -1 with a sentence in WHY. Never reads past LEN.
 */
int gcl_wire_decode(const void *buf, size_t len, const uint8_t token[16], gcl_wire_header_t *out,
                    char *why, size_t n);

#endif /* GCL_WIRE_H */
