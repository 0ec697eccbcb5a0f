/* Checkpoint files (examples/train/data/ckpt.c): what is written reads back bitwise, with mode 0600
 * and no temporary left; any damage is caught; the newest valid checkpoint is found and corrupt
 * ones are skipped with a warning; old ones and stale temporaries are pruned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/ckpt.h"
#include "tmpdir.h"

static char dir[64];

static ckpt_meta_t small_meta(uint64_t step)
{
    ckpt_meta_t m;
    memset(&m, 0, sizeof m);
    m.step = step;
    m.nlayers = 2;
    m.dims[0] = 5;
    m.dims[1] = 4;
    m.dims[2] = 3;
    m.nparams = 4 * 6 + 3 * 5;
    m.nstate = 1;
    m.lr = 0.05;
    m.seed = 7;
    m.global_batch = 64;
    m.replicas = 4;
    return m;
}

static float *data_for(const ckpt_meta_t *m, float base)
{
    size_t n = (1 + m->nstate) * m->nparams;
    float *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = base + 0.25f * (float)i;
    return d;
}

static void write_step(uint64_t step)
{
    ckpt_meta_t m = small_meta(step);
    float *d = data_for(&m, (float)step);
    char path[256], err[512];
    ckpt_path(dir, step, path, sizeof path);
    assert_int_equal(ckpt_write(path, &m, d, err, sizeof err), 0);
    free(d);
}

static int count_entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.' || strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

static void clear_dir(void)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(path);
    }
    closedir(d);
}

static void test_roundtrip(void **state)
{
    clear_dir();
    write_step(42);
    char path[256], err[512];
    ckpt_path(dir, 42, path, sizeof path);
    assert_non_null(strstr(path, "/ckpt-0000000042.gclt"));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    ckpt_meta_t m = small_meta(42);
    assert_int_equal(st.st_size, (off_t)ckpt_file_bytes(&m));
    assert_int_equal(count_entries(), 1); /* no temporary file left behind */
    ckpt_t c;
    assert_int_equal(ckpt_read(path, &c, err, sizeof err), 0);
    assert_memory_equal(&c.meta, &m, sizeof m);
    float *d = data_for(&m, 42);
    assert_memory_equal(c.data, d, (1 + m.nstate) * m.nparams * sizeof(float));
    free(d);
    ckpt_free(&c);
}

/* Damages the file of STEP: flips the byte at AT, or truncates it to AT bytes when TRUNCATE. */
static void damage(uint64_t step, long at, int truncate_it)
{
    char path[256];
    ckpt_path(dir, step, path, sizeof path);
    if (truncate_it) {
        assert_int_equal(truncate(path, at), 0);
        return;
    }
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
}

static void expect_bad(uint64_t step, const char *want)
{
    char path[256], err[512] = "";
    ckpt_path(dir, step, path, sizeof path);
    ckpt_t c;
    assert_int_equal(ckpt_read(path, &c, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
    assert_null(c.data);
}

static void test_corruption(void **state)
{
    clear_dir();
    ckpt_meta_t m = small_meta(1);
    long size = (long)ckpt_file_bytes(&m);
    write_step(1);
    damage(1, CKPT_HEADER_BYTES + 17, 0); /* a bit of the weights */
    expect_bad(1, "checksum mismatch");
    write_step(2);
    damage(2, size - 2, 0); /* the CRC itself */
    expect_bad(2, "checksum mismatch");
    write_step(3);
    damage(3, 20, 0); /* the step in the header */
    expect_bad(3, "checksum mismatch");
    write_step(4);
    damage(4, 3, 0); /* the magic */
    expect_bad(4, "not a version 1 checkpoint");
    write_step(5);
    damage(5, size - 100, 1);
    expect_bad(5, "truncated or corrupt");
    write_step(6);
    damage(6, 100, 1);
    expect_bad(6, "truncated header");
    write_step(7);
    damage(7, 16 + 16, 0); /* the layer count: the header does not add up */
    expect_bad(7, "implausible header");
}

static int warnings;
static char last_warning[4800];

static void on_warn(void *ctx, const char *text)
{
    (void)ctx;
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", text);
}

static void test_find_latest(void **state)
{
    clear_dir();
    char err[512];
    ckpt_t c;
    warnings = 0;
    assert_int_equal(ckpt_find_latest(dir, &c, on_warn, NULL, err, sizeof err), 0);
    write_step(10);
    write_step(20);
    write_step(30);
    damage(30, CKPT_HEADER_BYTES + 5, 0);
    /* Names that are not checkpoints: a killed writer's temporary, and anything else. */
    char other[256];
    snprintf(other, sizeof other, "%s/.ckpt-0000000040.gclt.tmp-123", dir);
    FILE *f = fopen(other, "w");
    fputs("half a checkpoint", f);
    fclose(f);
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    f = fopen(other, "w");
    fclose(f);
    assert_int_equal(ckpt_find_latest(dir, &c, on_warn, NULL, err, sizeof err), 1);
    assert_int_equal(c.meta.step, 20);
    assert_true(c.data[0] == 20.0f);
    ckpt_free(&c);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "skipping corrupt checkpoint"));
    assert_non_null(strstr(last_warning, "ckpt-0000000030.gclt"));
    assert_int_equal(ckpt_find_latest("/nonexistent/dir", &c, on_warn, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/dir"));
}

static void test_prune(void **state)
{
    clear_dir();
    for (uint64_t s = 1; s <= 5; s++)
        write_step(s * 100);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s/.ckpt-0000000600.gclt.tmp-99", dir);
    FILE *f = fopen(tmp, "w");
    fclose(f);
    assert_int_equal(ckpt_prune(dir, 2), 4); /* 100, 200, 300 and the temporary */
    assert_int_equal(count_entries(), 2);
    char path[256];
    ckpt_path(dir, 500, path, sizeof path);
    assert_int_equal(access(path, F_OK), 0);
    ckpt_path(dir, 300, path, sizeof path);
    assert_int_not_equal(access(path, F_OK), 0);
}

static void test_compatible(void **state)
{
    ckpt_meta_t a = small_meta(5), b = small_meta(9);
    char err[256] = "";
    b.replicas = 16; /* the layout may change: same trajectory */
    assert_int_equal(ckpt_compatible(&a, &b, err, sizeof err), 0);
    b.seed = 8;
    assert_int_equal(ckpt_compatible(&a, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "--seed"));
    b = small_meta(9);
    b.dims[1] = 8;
    assert_int_equal(ckpt_compatible(&a, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "--hidden"));
    b = small_meta(9);
    b.global_batch = 128;
    assert_int_equal(ckpt_compatible(&a, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "global batch"));
}

static void test_write_failure(void **state)
{
    ckpt_meta_t m = small_meta(1);
    float *d = data_for(&m, 0);
    char err[512] = "";
    assert_int_equal(ckpt_write("/nonexistent/dir/ckpt-0000000001.gclt", &m, d, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "cannot create"));
    free(d);
    assert_int_equal(ckpt_make_dir("/proc/version", err, sizeof err), -1);
    assert_non_null(strstr(err, "a file of that name exists"));
}

int main(void)
{
    if (tmpdir_make(dir, sizeof dir, "test-train-ckpt"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_corruption),
        cmocka_unit_test(test_find_latest), cmocka_unit_test(test_prune),
        cmocka_unit_test(test_compatible),  cmocka_unit_test(test_write_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return tmpdir_remove(dir) == 0 ? rc : 1;
}
