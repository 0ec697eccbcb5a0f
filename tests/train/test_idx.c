/* IDX reading (examples/train/data/idx.c): good files, gzip'd and plain, and every kind of damage
 * a dataset file can have, each one clear error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data/idx.h"
#include "tmpdir.h"

static char dir[64];

/* An IDX image file of N items of 4 x 3 (item i, pixel j = i * 16 + j) or a label file. */
static size_t make_idx(uint8_t *buf, int ndims, uint32_t n, int items_written)
{
    uint8_t head[16] = {0, 0, 8, (uint8_t)ndims};
    uint32_t dims[3] = {n, 4, 3};
    size_t at = 4;
    for (int d = 0; d < ndims; d++, at += 4)
        for (int b = 0; b < 4; b++)
            head[at + b] = (uint8_t)(dims[d] >> (24 - 8 * b));
    memcpy(buf, head, at);
    size_t item = ndims == 3 ? 12 : 1;
    for (int i = 0; i < items_written; i++)
        for (size_t j = 0; j < item; j++)
            buf[at++] = (uint8_t)(ndims == 3 ? i * 16 + (int)j : i % 10);
    return at;
}

static void write_file(const char *name, const void *data, size_t len, int gz)
{
    char path[512];
    assert_true(snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, data, (unsigned)len), (int)len);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        fclose(f);
    }
}

/* Reads DIR/NAME; returns idx_read's status, with ERR filled. */
static int read_named(const char *name, int ndims, long max, idx_array_t *a, char *err)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return idx_read(path, ndims, max, a, err, 512);
}

static void test_good_gzip_and_plain(void **state)
{
    uint8_t buf[256];
    size_t len = make_idx(buf, 3, 5, 5);
    write_file("a.gz", buf, len, 1);
    write_file("a", buf, len, 0);
    const char *names[] = {"a.gz", "a"};
    for (int k = 0; k < 2; k++) {
        idx_array_t a;
        char err[512] = "";
        assert_int_equal(read_named(names[k], 3, 0, &a, err), 0);
        assert_int_equal(a.count, 5);
        assert_int_equal(a.available, 5);
        assert_int_equal(a.rows, 4);
        assert_int_equal(a.cols, 3);
        assert_int_equal(a.data[3 * 12 + 7], 3 * 16 + 7);
        idx_free(&a);
    }
}

static void test_prefix(void **state)
{
    uint8_t buf[256];
    write_file("p.gz", buf, make_idx(buf, 3, 5, 5), 1);
    idx_array_t a;
    char err[512];
    assert_int_equal(read_named("p.gz", 3, 2, &a, err), 0);
    assert_int_equal(a.count, 2);
    assert_int_equal(a.available, 5);
    assert_int_equal(a.data[12 + 1], 17);
    idx_free(&a);
}

/* Reads NAME expecting failure, with WANT in the message. */
static void expect_error(const char *name, int ndims, const char *want)
{
    idx_array_t a;
    char err[512] = "";
    assert_int_equal(read_named(name, ndims, 0, &a, err), -1);
    if (!strstr(err, want))
        fail_msg("error for %s: \"%s\" lacks \"%s\"", name, err, want);
    assert_non_null(strstr(err, name)); /* names the file */
    assert_null(a.data);
}

static void test_missing(void **state)
{
    expect_error("nothing-here.gz", 3, "No such file");
}

static void test_bad_magic(void **state)
{
    uint8_t buf[256];
    size_t len = make_idx(buf, 3, 5, 5);
    buf[2] = 0x0d; /* floats, not bytes */
    write_file("magic.gz", buf, len, 1);
    expect_error("magic.gz", 3, "not an IDX file");
    write_file("dims.gz", buf, make_idx(buf, 1, 5, 5), 1); /* labels where images belong */
    expect_error("dims.gz", 3, "not an IDX file");
    write_file("text", "hello, world\n", 13, 0);
    expect_error("text", 3, "not an IDX file");
}

static void test_truncated(void **state)
{
    uint8_t buf[256];
    write_file("short.gz", buf, make_idx(buf, 3, 5, 3), 1); /* says 5 items, holds 3 */
    expect_error("short.gz", 3, "truncated");
    write_file("head.gz", buf, 6, 1);
    expect_error("head.gz", 3, "truncated");
    write_file("empty", "", 0, 0);
    expect_error("empty", 3, "truncated");
}

static void test_implausible(void **state)
{
    uint8_t buf[256];
    write_file("zero.gz", buf, make_idx(buf, 3, 0, 0), 1);
    expect_error("zero.gz", 3, "implausible");
    size_t len = make_idx(buf, 3, 5, 5);
    buf[8] = 0x7f; /* rows: 2^31 */
    write_file("huge.gz", buf, len, 1);
    expect_error("huge.gz", 3, "implausible");
}

static void test_trailing(void **state)
{
    uint8_t buf[256];
    size_t len = make_idx(buf, 1, 5, 5);
    buf[len++] = 42;
    write_file("trail.gz", buf, len, 1);
    expect_error("trail.gz", 1, "trailing");
}

/* A gzip file with its stream damaged: the end cut off, or a byte changed in the middle. */
static void test_corrupt_gzip(void **state)
{
    uint8_t buf[4096];
    size_t len = make_idx(buf, 3, 200, 200);
    write_file("good.gz", buf, len, 1);
    char path[128];
    snprintf(path, sizeof path, "%s/good.gz", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t gz[8192];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    assert_true(n > 40);
    write_file("cut", gz, n - 6, 0); /* the CRC and length trailer gone */
    expect_error("cut", 3, "corrupt gzip");
    gz[n / 2] ^= 0x55;
    write_file("flip", gz, n, 0);
    expect_error("flip", 3, "corrupt gzip");
}

/* Writes a dataset of 28 x 28 images into DIR/SUB: N_TRAIN and N_TEST items, LABEL_MAX the
 * largest label, TEST_LABELS labels in the test label file. */
static void write_dataset(const char *sub, uint32_t n_train, uint32_t n_test, int label_max,
                          uint32_t test_labels)
{
    char d[128];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    assert_int_equal(mkdir(d, 0700), 0);
    const char *prefix[2] = {"train", "t10k"};
    uint32_t counts[2] = {n_train, n_test}, nlabels[2] = {n_train, test_labels};
    for (int s = 0; s < 2; s++) {
        uint32_t n = counts[s];
        size_t len = 16 + (size_t)n * 784;
        uint8_t *img = calloc(1, len), lab[64] = {0, 0, 8, 1};
        uint8_t hd[16] = {0, 0, 8, 3, 0, 0, 0, (uint8_t)n, 0, 0, 0, 28, 0, 0, 0, 28};
        memcpy(img, hd, 16);
        lab[7] = (uint8_t)nlabels[s];
        for (uint32_t i = 0; i < nlabels[s]; i++)
            lab[8 + i] = (uint8_t)(i % (uint32_t)(label_max + 1));
        char name[160];
        snprintf(name, sizeof name, "%s/%s-images-idx3-ubyte.gz", sub, prefix[s]);
        write_file(name, img, len, 1);
        snprintf(name, sizeof name, "%s/%s-labels-idx1-ubyte", sub, prefix[s]); /* plain */
        write_file(name, lab, 8 + nlabels[s], 0);
        free(img);
    }
}

static void test_dataset(void **state)
{
    char d[128], err[512] = "";
    dataset_t ds;
    write_dataset("ok", 20, 8, 9, 8);
    snprintf(d, sizeof d, "%s/ok", dir);
    assert_int_equal(dataset_load(d, 0, 0, &ds, err, sizeof err), 0);
    assert_int_equal(ds.train_x.count, 20);
    assert_int_equal(ds.test_y.count, 8);
    assert_int_equal(ds.train_y.data[13], 3);
    dataset_free(&ds);
    assert_int_equal(dataset_load(d, 10, 4, &ds, err, sizeof err), 0);
    assert_int_equal(ds.train_x.count, 10);
    assert_int_equal(ds.test_x.count, 4);
    dataset_free(&ds);

    write_dataset("label", 20, 8, 10, 8);
    snprintf(d, sizeof d, "%s/label", dir);
    assert_int_equal(dataset_load(d, 0, 0, &ds, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a class"));
    write_dataset("count", 20, 8, 9, 7);
    snprintf(d, sizeof d, "%s/count", dir);
    assert_int_equal(dataset_load(d, 0, 0, &ds, err, sizeof err), -1);
    assert_non_null(strstr(err, "7 labels for 8 images"));
    snprintf(d, sizeof d, "%s/none", dir);
    assert_int_equal(dataset_load(d, 0, 0, &ds, err, sizeof err), -1);
    assert_non_null(strstr(err, "train-images-idx3-ubyte.gz: No such file"));
}

int main(void)
{
    if (tmpdir_make(dir, sizeof dir, "test-train-idx"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_gzip_and_plain),
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_implausible),
        cmocka_unit_test(test_trailing),
        cmocka_unit_test(test_corrupt_gzip),
        cmocka_unit_test(test_dataset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return tmpdir_remove(dir) == 0 ? rc : 1;
}
