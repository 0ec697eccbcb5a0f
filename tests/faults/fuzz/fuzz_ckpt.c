/*
 * libFuzzer target: the checkpoint reader of train (ckpt_read, examples/train/data/ckpt.c). The
 * input is one mode byte, then the file. Mode bit 0 set: the last 4 bytes are replaced by the
 * file's correct CRC-32, so that the fuzzer explores what lies behind the checksum (a writer that
 * computes its CRC over garbage is the case that matters). A file the reader accepts must hold
 * exactly what its header promises: its size is ckpt_file_bytes(), and all of the
 * (1 + nstate) x nparams floats can be read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/ckpt.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    uint8_t *file = malloc(size ? size : 1);
    if (!file)
        return 0;
    memcpy(file, data, size);
    if ((mode & 1) && size >= 4) {
        uint32_t crc = (uint32_t)crc32_z(crc32(0, NULL, 0), file, size - 4);
        memcpy(file + size - 4, &crc, 4);
    }
    char path[64], err[512];
    int fd = fuzz_memfile(file, size, path, sizeof path);
    free(file);
    if (fd < 0)
        return 0;
    ckpt_t c;
    int rc = ckpt_read(path, &c, err, sizeof err);
    close(fd);
    if (rc == 0) {
        if (ckpt_file_bytes(&c.meta) != (uint64_t)size)
            abort();
        /* Every float the header promises is there (AddressSanitizer checks each read). */
        size_t n = (1 + (size_t)c.meta.nstate) * (size_t)c.meta.nparams;
        volatile float sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += c.data[i];
        (void)sum;
        ckpt_free(&c);
    } else if (memchr(err, '\0', sizeof err) == NULL || err[0] == '\0') {
        abort();
    }
    return 0;
}
