/*
 * faults-files CHECK DATA_DIR: the file readers against the malformed files of
 * tests/faults/data/ (made by fuzz/make_seeds.py). Every bad file must be refused with one line
 * that names the file (and, where the table says, the problem); every good file must load.
 *
 *   readers        topology files (sim_topology_load), checkpoints (ckpt_read), IDX files
 *                  (idx_read): the table below. Exit 0 or 1.
 *   ckpt-overflow  data/ckpt-size-overflow.gclt, a 516-byte file whose header promises 2^62
 *                  parameters, for which ckpt_file_bytes() would wrap to 516: it must be
 *                  refused. Exit 0 or 1.
 *   idx-claim      data/idx/images-claim-104g.idx, a 24-byte file whose header claims 104 GB of
 *                  images: idx_read must refuse it as truncated without asking for the memory
 *                  first (under an 8 GiB address-space limit). Exit 0 or 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "data/ckpt.h"
#include "data/idx.h"
#include "sim/topology/topology.h"

static int failures;

static void expect(int ok, const char *what, const char *path, const char *err)
{
    if (!ok) {
        failures++;
        printf("FAIL %s: %s: %s\n", path, what, err);
    } else {
        printf("ok   %s: %s\n", path, err[0] ? err : what);
    }
}

/* A refusal: rc != 0, one line, naming the file, and containing WANT (when not NULL). */
static void refused(int rc, const char *path, const char *err, const char *want)
{
    int one_line = err[0] && !strchr(err, '\n');
    int names = strstr(err, path) != NULL;
    int says = !want || strstr(err, want) != NULL;
    char what[160];
    snprintf(what, sizeof what, "should be refused in one line naming the file%s%s%s",
             want ? " and saying \"" : "", want ? want : "", want ? "\"" : "");
    expect(rc != 0 && one_line && names && says, what, path, err);
}

static void topology(const char *dir, const char *name, const char *want)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/topo/%s", dir, name);
    sim_topology_t *t = NULL;
    int rc = sim_topology_load(path, &t, err, sizeof err);
    if (!want) {
        expect(rc == 0 && t, "should load", path, err);
    } else {
        refused(rc, path, err, want[0] ? want : NULL);
    }
    sim_topology_free(t);
}

static void checkpoint(const char *dir, const char *name, const char *want)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ckpt_t c;
    int rc = ckpt_read(path, &c, err, sizeof err);
    if (!want)
        expect(rc == 0 && c.meta.nparams == 9 && c.meta.nstate == 1, "should load", path, err);
    else
        refused(rc, path, err, want);
    if (rc == 0)
        ckpt_free(&c);
}

static void idx(const char *dir, const char *name, int ndims, const char *want)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/idx/%s", dir, name);
    idx_array_t a;
    int rc = idx_read(path, ndims, 0, &a, err, sizeof err);
    if (!want)
        expect(rc == 0 && a.count == 3 && a.data[2] == 3, "should load", path, err);
    else
        refused(rc, path, err, want);
    if (rc == 0)
        idx_free(&a);
}

static int readers(const char *dir)
{
    topology(dir, "ok.topo", NULL);
    topology(dir, "too-many-ipus.topo", "ipus must be 1..1024");
    topology(dir, "unknown-key.topo", "colour");
    topology(dir, "repeated-key.topo", ":2:");
    topology(dir, "missing-ipus.topo", "ipus");
    topology(dir, "link-across-ilds.topo", ":3:");
    topology(dir, "bad-decimal.topo", ":2:");
    topology(dir, "control-byte.topo", ":1:");
    topology(dir, "long-line.topo", ":1:");
    topology(dir, "unreachable.topo", "");
    topology(dir, "extra-value.topo", ":1:");
    topology(dir, "negative.topo", ":1:");
    topology(dir, "ild-not-dividing.topo", "");
    topology(dir, "empty.topo", "ipus");
    topology(dir, "binary.topo", ":1:");
    topology(dir, "no-such-file.topo", "");
    checkpoint(dir, "ckpt-valid.gclt", NULL);
    checkpoint(dir, "ckpt-truncated.gclt", "truncated");
    checkpoint(dir, "ckpt-flipped-bit.gclt", "checksum mismatch");
    checkpoint(dir, "ckpt-params-disagree.gclt", "parameters");
    checkpoint(dir, "no-such-file.gclt", "No such file");
    idx(dir, "labels-ok.idx", 1, NULL);
    idx(dir, "labels-truncated.idx", 1, "truncated");
    idx(dir, "labels-trailing.idx", 1, "trailing bytes");
    idx(dir, "labels-wrong-magic.idx", 1, "not an IDX file");
    idx(dir, "labels-zero-items.idx", 1, "implausible IDX dimensions");
    idx(dir, "images-huge-side.idx", 3, "implausible IDX dimensions");
    idx(dir, "labels-corrupt.gz", 1, "");
    idx(dir, "labels-truncated.gz", 1, "");
    idx(dir, "labels-ok.idx", 3, "not an IDX file"); /* labels where images are expected */
    printf("faults-files readers: %s (%d failures)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}

static int ckpt_overflow(const char *dir)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/ckpt-size-overflow.gclt", dir);
    ckpt_t c;
    if (ckpt_read(path, &c, err, sizeof err) != 0) {
        printf("ok   %s refused: %s\n", path, err);
        return 0;
    }
    printf("FAIL ckpt_read accepted %s: %llu parameters, %llu state vectors from a 516-byte "
           "file\n",
           path, (unsigned long long)c.meta.nparams, (unsigned long long)c.meta.nstate);
    ckpt_free(&c);
    return 1;
}

static int idx_claim(const char *dir)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/idx/images-claim-104g.idx", dir);
    /* An address-space limit makes the allocation fail fast instead of being overcommitted.
     * (Not under AddressSanitizer, whose shadow memory needs the address space: there,
     * ASAN_OPTIONS max_allocation_size_mb does the same, see CMakeLists.txt.) */
#ifndef __SANITIZE_ADDRESS__
    struct rlimit rl = {(rlim_t)8 << 30, (rlim_t)8 << 30};
    setrlimit(RLIMIT_AS, &rl);
#endif
    idx_array_t a;
    int rc = idx_read(path, 3, 0, &a, err, sizeof err);
    if (rc == 0) {
        idx_free(&a);
        printf("FAIL %s: a 24-byte file was accepted\n", path);
        return 1;
    }
    if (strstr(err, "truncated")) {
        printf("ok   %s: %s\n", path, err);
        return 0;
    }
    printf("FAIL %s is refused only because the 104 GB its header claims cannot be allocated "
           "(%s): idx_read must read before it allocates the claim\n",
           path, err);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: faults-files readers|ckpt-overflow|idx-claim DATA_DIR\n");
        return 2;
    }
    if (!strcmp(argv[1], "readers"))
        return readers(argv[2]);
    if (!strcmp(argv[1], "ckpt-overflow"))
        return ckpt_overflow(argv[2]);
    if (!strcmp(argv[1], "idx-claim"))
        return idx_claim(argv[2]);
    fprintf(stderr, "faults-files: unknown check %s\n", argv[1]);
    return 2;
}
