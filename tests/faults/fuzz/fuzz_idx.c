/*
 * libFuzzer target: the IDX reader of train (idx_read, examples/train/data/idx.c), gzip'd or plain.
 * The input is one mode byte, then the file. Mode: bit 0, images (3 dimensions) or labels (1);
 * bits 1-6, how many items to keep (0: all, which also checks the end of the stream). What the
 * reader accepts must hold count x rows x cols bytes.
 *
 * Known bug, guarded here until it is fixed: idx_read allocates what the header claims (up to
 * 10^8 x 4096 x 4096 bytes) before it knows whether the file holds that much, so a 24-byte
 * file makes it ask for 104 GB (examples/train/data/idx.c, idx_read). Inputs whose header claims
 * more than FUZZ_IDX_MAX_CLAIM bytes are skipped; tests/faults/test_files.c reproduces the bug
 * (and skips until it is fixed). Build with -DFUZZ_IDX_MAX_CLAIM=0 to fuzz without the guard.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz_util.h"
#include "data/idx.h"

#ifndef FUZZ_IDX_MAX_CLAIM
#define FUZZ_IDX_MAX_CLAIM 67108864u /* 64 MiB */
#endif

/* The bytes of items the header at PATH claims (as idx_read reads it), or 0 if it has none. */
static uint64_t claimed_bytes(const char *path, int ndims, long keep)
{
    uint8_t h[16];
    gzFile f = gzopen(path, "rb");
    if (!f)
        return 0;
    int n = gzread(f, h, 4 + 4 * (unsigned)ndims);
    gzclose(f);
    if (n != 4 + 4 * ndims)
        return 0;
    uint64_t d[3] = {1, 1, 1};
    for (int i = 0; i < ndims; i++)
        d[i] = (uint64_t)h[4 + 4 * i] << 24 | (uint64_t)h[5 + 4 * i] << 16 |
               (uint64_t)h[6 + 4 * i] << 8 | h[7 + 4 * i];
    if (keep > 0 && (uint64_t)keep < d[0])
        d[0] = (uint64_t)keep;
    return d[0] * d[1] * d[2];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int ndims = data[0] & 1 ? 3 : 1;
    long keep = (data[0] >> 1) & 63;
    char path[64], err[512];
    int fd = fuzz_memfile(data + 1, size - 1, path, sizeof path);
    if (fd < 0)
        return 0;
    if (FUZZ_IDX_MAX_CLAIM > 0 && claimed_bytes(path, ndims, keep) > FUZZ_IDX_MAX_CLAIM) {
        close(fd);
        return 0;
    }
    idx_array_t a;
    int rc = idx_read(path, ndims, keep, &a, err, sizeof err);
    close(fd);
    if (rc == 0) {
        if (a.count < 1 || a.count > a.available || (keep && a.count > keep) || a.rows < 1 ||
            a.cols < 1 || (ndims == 1 && (a.rows != 1 || a.cols != 1)))
            abort();
        size_t n = (size_t)a.count * (size_t)a.rows * (size_t)a.cols;
        volatile unsigned sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += a.data[i];
        (void)sum;
        idx_free(&a);
    } else if (memchr(err, '\0', sizeof err) == NULL || err[0] == '\0') {
        abort();
    }
    return 0;
}
