/* IDX reading; see idx.h. zlib reads gzip'd and plain files alike (gzread is transparent). */
#include "data/idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Limits that no real IDX file reaches but a corrupt header easily does: they keep a damaged
 * dimension from turning into a huge allocation. */
#define IDX_MAX_ITEMS 100000000L
#define IDX_MAX_SIDE  4096

/* Reads exactly LEN bytes, or says why not: -1 with ERR set. */
static int read_exact(gzFile f, const char *path, void *buf, size_t len, const char *what,
                      char *err, size_t errlen)
{
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
        int n = gzread(f, (char *)buf + done, (unsigned)chunk);
        if (n < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            snprintf(err, errlen, "%s: corrupt gzip stream while reading the %s (%s)", path, what,
                     msg);
            return -1;
        }
        if (n == 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END)
                snprintf(err, errlen, "%s: corrupt gzip stream while reading the %s (%s)", path,
                         what, msg);
            else
                snprintf(err, errlen,
                         "%s: truncated: the %s needs %zu bytes, the file ends after %zu", path,
                         what, len, done);
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

/* Reads the BYTES a header promised into a new buffer at *DATA, which grows (doubling) only as
 * the data arrives: a small file whose header claims gigabytes is refused as truncated, without
 * first allocating the claim. */
static int read_growing(gzFile f, const char *path, size_t bytes, const char *what, uint8_t **data,
                        char *err, size_t errlen)
{
    size_t cap = bytes < ((size_t)16 << 20) ? bytes : ((size_t)16 << 20), done = 0;
    uint8_t *buf = malloc(cap ? cap : 1);
    while (buf) {
        size_t want = cap - done;
        if (want > 0 && read_exact(f, path, buf + done, want, what, err, errlen)) {
            if (strstr(err, "truncated")) /* say it of the whole, not of this part */
                snprintf(err, errlen,
                         "%s: truncated: the %s need %zu bytes, the file ends %ld bytes in", path,
                         what, bytes, (long)gztell(f));
            free(buf);
            return -1;
        }
        done = cap;
        if (done == bytes) {
            *data = buf;
            return 0;
        }
        cap = bytes - cap < cap ? bytes : cap * 2;
        uint8_t *grown = realloc(buf, cap);
        if (!grown)
            free(buf);
        buf = grown;
    }
    snprintf(err, errlen, "%s: out of host memory for the %s (%zu bytes)", path, what, bytes);
    return -1;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads and checks the magic and dimensions. */
static int read_header(gzFile f, const char *path, int ndims, idx_array_t *out, char *err,
                       size_t errlen)
{
    uint8_t magic[4], dims[12];
    if (read_exact(f, path, magic, 4, "IDX header", err, errlen))
        return -1;
    if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] != ndims) {
        snprintf(err, errlen,
                 "%s: not an IDX file of unsigned bytes with %d dimension%s (magic %02x %02x %02x "
                 "%02x, expected 00 00 08 %02x)",
                 path, ndims, ndims == 1 ? "" : "s", magic[0], magic[1], magic[2], magic[3], ndims);
        return -1;
    }
    if (read_exact(f, path, dims, (size_t)ndims * 4, "IDX dimensions", err, errlen))
        return -1;
    uint32_t n = be32(dims), rows = ndims == 3 ? be32(dims + 4) : 1;
    uint32_t cols = ndims == 3 ? be32(dims + 8) : 1;
    if (n == 0 || n > IDX_MAX_ITEMS || rows == 0 || rows > IDX_MAX_SIDE || cols == 0 ||
        cols > IDX_MAX_SIDE) {
        snprintf(err, errlen, "%s: implausible IDX dimensions %u x %u x %u (corrupt header?)", path,
                 n, rows, cols);
        return -1;
    }
    out->available = n;
    out->rows = (int)rows;
    out->cols = (int)cols;
    return 0;
}

/* After the last item of a whole-file read: the stream must end here, with a good CRC. */
static int check_end(gzFile f, const char *path, char *err, size_t errlen)
{
    char extra;
    int n = gzread(f, &extra, 1);
    if (n == 0) {
        int zerr;
        const char *msg = gzerror(f, &zerr);
        if (zerr == Z_OK || zerr == Z_STREAM_END)
            return 0;
        snprintf(err, errlen, "%s: corrupt gzip stream at its end (%s)", path, msg);
        return -1;
    }
    if (n < 0) {
        int zerr;
        snprintf(err, errlen, "%s: corrupt gzip stream at its end (%s)", path, gzerror(f, &zerr));
        return -1;
    }
    snprintf(err, errlen, "%s: trailing bytes after the last IDX item (corrupt file?)", path);
    return -1;
}

int idx_read(const char *path, int ndims, long max_items, idx_array_t *out, char *err,
             size_t errlen)
{
    memset(out, 0, sizeof *out);
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : "cannot open");
        return -1;
    }
    gzbuffer(f, 1 << 17);
    int rc = read_header(f, path, ndims, out, err, errlen);
    if (rc == 0) {
        out->count = max_items > 0 && max_items < out->available ? max_items : out->available;
        size_t bytes = (size_t)out->count * (size_t)out->rows * (size_t)out->cols;
        rc =
            read_growing(f, path, bytes, ndims == 1 ? "labels" : "images", &out->data, err, errlen);
        if (rc == 0 && out->count == out->available)
            rc = check_end(f, path, err, errlen);
    }
    gzclose(f);
    if (rc != 0)
        idx_free(out);
    return rc;
}

void idx_free(idx_array_t *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* DIR/NAME.gz, or DIR/NAME when only the uncompressed file is there. */
static void data_path(const char *dir, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.gz", dir, name);
    FILE *f = fopen(buf, "rb");
    if (f) {
        fclose(f);
        return;
    }
    char plain[4096];
    snprintf(plain, sizeof plain, "%s/%s", dir, name);
    f = fopen(plain, "rb");
    if (f) {
        fclose(f);
        snprintf(buf, len, "%s", plain);
    }
}

static int load_pair(const char *dir, const char *prefix, long max, idx_array_t *x, idx_array_t *y,
                     char *err, size_t errlen)
{
    char name[64], path[4200];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    data_path(dir, name, path, sizeof path);
    if (idx_read(path, 3, max, x, err, errlen))
        return -1;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    data_path(dir, name, path, sizeof path);
    if (idx_read(path, 1, max, y, err, errlen))
        return -1;
    if (x->available != y->available) {
        snprintf(err, errlen, "%s: %ld labels for %ld images", path, y->available, x->available);
        return -1;
    }
    for (long i = 0; i < y->count; i++) {
        if (y->data[i] >= 10) {
            snprintf(err, errlen, "%s: label %d of item %ld is not a class 0..9 (corrupt file?)",
                     path, y->data[i], i);
            return -1;
        }
    }
    return 0;
}

int dataset_load(const char *dir, long max_train, long max_test, dataset_t *out, char *err,
                 size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->classes = 10;
    int rc = load_pair(dir, "train", max_train, &out->train_x, &out->train_y, err, errlen);
    if (rc == 0)
        rc = load_pair(dir, "t10k", max_test, &out->test_x, &out->test_y, err, errlen);
    if (rc == 0 &&
        (out->train_x.rows != out->test_x.rows || out->train_x.cols != out->test_x.cols)) {
        snprintf(err, errlen, "%s: training images are %dx%d but test images %dx%d", dir,
                 out->train_x.rows, out->train_x.cols, out->test_x.rows, out->test_x.cols);
        rc = -1;
    }
    if (rc != 0)
        dataset_free(out);
    return rc;
}

void dataset_free(dataset_t *d)
{
    idx_free(&d->train_x);
    idx_free(&d->train_y);
    idx_free(&d->test_x);
    idx_free(&d->test_y);
}
