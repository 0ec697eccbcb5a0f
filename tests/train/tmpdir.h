/* A temporary directory for a test program, removed with everything in it at the end. */
#ifndef TRAIN_TEST_TMPDIR_H
#define TRAIN_TEST_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline int tmpdir_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(path);
}

/* Creates /tmp/NAME-XXXXXX into DIR (at least 64 bytes). Returns 0 or -1. */
static inline int tmpdir_make(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "/tmp/%s-XXXXXX", name);
    return mkdtemp(dir) ? 0 : -1;
}

static inline int tmpdir_remove(const char *dir)
{
    return nftw(dir, tmpdir_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
