/*
 * Unit tests of the freed-memory policy (gcl/src/transport/net/heap.c): a thread that allocates and
 * frees a few 256 KiB buffers a round, as libfabric does for pieces that come before their receive,
 * faults every page back in each round under glibc's own thresholds, and none once
 * gcl_heap_keep has run; a threshold of the user's own, or 0, leaves glibc alone. Each case runs
 * in a child process of its own: the thresholds are process-wide and set once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/net/heap.h"

#define PIECE  (256 << 10)
#define PIECES 3
#define ROUNDS 50

static long faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/* One round: PIECES buffers allocated, touched and freed, the last first. The fill is never 0
 * and each buffer is handed to an empty asm: at -O3 GCC made malloc and memset of 0 a calloc
 * (which need not touch fresh pages) and dropped buffers it saw only written and freed, and the
 * Release build measured another pattern (3 faults a round with the policy, not 0). */
static void round_of(int r)
{
    char *b[PIECES];
    for (int i = 0; i < PIECES; i++) {
        b[i] = malloc(PIECE);
        if (b[i])
            memset(b[i], r + 1, PIECE);
        __asm__ volatile("" : : "r"(b[i]) : "memory");
    }
    for (int i = PIECES - 1; i >= 0; i--)
        free(b[i]);
}

/* The pattern, in a thread of its own (a heap of its own, as an IPU thread has): one buffer
 * freed first, as glibc sees the first unexpected piece (it raises its thresholds to twice the
 * piece), and a round that brings the heap's pages in; then ROUNDS rounds counted. */
static void *churn(void *arg)
{
    long *per_round = arg;
    free(malloc(PIECE));
    round_of(0);
    long before = faults();
    for (int r = 1; r <= ROUNDS; r++)
        round_of(r);
    *per_round = (faults() - before) / ROUNDS;
    return NULL;
}

/* Runs the pattern in a child after SETUP (keep, and an environment variable, or none);
 * returns the child's faults per round (capped at 250), or -1 if it failed. KEPT gets what
 * gcl_heap_keep returned. */
static int child(long keep, const char *var, int *kept)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        if (var)
            setenv(var, "131072", 1);
        unsigned char out[2] = {(unsigned char)gcl_heap_keep(keep), 0};
        long per_round = -1;
        pthread_t t;
        if (pthread_create(&t, NULL, churn, &per_round) == 0)
            pthread_join(t, NULL);
        out[1] = (unsigned char)(per_round < 0 ? 255 : per_round > 250 ? 250 : per_round);
        _exit(write(fd[1], out, 2) == 2 ? 0 : 1);
    }
    close(fd[1]);
    unsigned char in[2] = {0, 255};
    ssize_t n = read(fd[0], in, 2);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    *kept = in[0];
    return n == 2 && in[1] != 255 ? in[1] : -1;
}

static void skip_under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* AddressSanitizer's allocator is not glibc's */
#endif
}

/* glibc's own thresholds: the freed top of the heap goes back to the kernel every round, and
 * the next round faults its pages in again (3 x 64 pages). The case the policy is for. */
static void test_glibc_gives_back(void **state)
{
    (void)state;
    skip_under_asan();
    int kept = -1, per_round = child(0, NULL, &kept);
    assert_int_equal(kept, 0);
    assert_true(per_round >= PIECES * PIECE / 4096 / 2);
}

static void test_keep_stops_the_faults(void **state)
{
    (void)state;
    skip_under_asan();
    int kept = -1, per_round = child(64 << 20, NULL, &kept);
    assert_int_equal(kept, 1);
    assert_in_range(per_round, 0, 1);
}

/* A threshold of the user's own wins: libgcl sets nothing, and the faults are glibc's again. */
static void test_user_threshold_wins(void **state)
{
    (void)state;
    skip_under_asan();
    int kept = -1, per_round = child(64 << 20, "MALLOC_TRIM_THRESHOLD_", &kept);
    assert_int_equal(kept, 0);
    assert_true(per_round >= PIECES * PIECE / 4096 / 2);
    assert_int_not_equal(child(64 << 20, "MALLOC_MMAP_THRESHOLD_", &kept), -1);
    assert_int_equal(kept, 0);
}

/* Set once per process: a second instance's transport does not set it again. */
static void test_once(void **state)
{
    (void)state;
    pid_t pid = fork();
    if (pid == 0)
        _exit(gcl_heap_keep(64 << 20) == 1 && gcl_heap_keep(64 << 20) == 0 ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
#if !defined(__SANITIZE_ADDRESS__)
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
}

int main(void)
{
    unsetenv("MALLOC_TRIM_THRESHOLD_");
    unsetenv("MALLOC_MMAP_THRESHOLD_");
    unsetenv("GLIBC_TUNABLES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glibc_gives_back),
        cmocka_unit_test(test_keep_stops_the_faults),
        cmocka_unit_test(test_user_threshold_wins),
        cmocka_unit_test(test_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
