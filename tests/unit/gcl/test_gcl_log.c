/*
 * Unit tests of libgcl's logging (gcl/src/base/log.c): the host:pid:instance/replica prefix, one
 * whole line per call when many IPU threads log at once, and the parsers of GCL_LOG_LEVEL and
 * GCL_LOG_SUBSYS. tests/faults/tsan.sh runs this under ThreadSanitizer: the threads' first
 * lines race for the host name's one-time initialisation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

#define THREADS 8
#define LINES   25

static pthread_barrier_t start;

static void *logger(void *arg)
{
    int replica = (int)(intptr_t)arg;
    gcl_log_set_replica(replica);
    pthread_barrier_wait(&start); /* then all at once: the first lines race */
    for (int i = 0; i < LINES; i++)
        GCL_WARN(GCL_SUB_COLL, "thread %d line %d", replica, i);
    return NULL;
}

/* Runs FN with stderr in a temporary file; returns the file's text (to free). */
static char *capture(void (*fn)(void))
{
    char path[] = "/tmp/test-gcl-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(pread(fd, text, (size_t)len, 0), len);
    close(fd);
    return text;
}

static void log_from_threads(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int r = 0; r < THREADS; r++)
        assert_int_equal(pthread_create(&t[r], NULL, logger, (void *)(intptr_t)r), 0);
    for (int r = 0; r < THREADS; r++)
        pthread_join(t[r], NULL);
    pthread_barrier_destroy(&start);
}

static void test_threads(void **state)
{
    (void)state;
    gcl_log_level = GCL_LOG_WARN;
    gcl_log_set_instance(3);
    char *text = capture(log_from_threads);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    int seen[THREADS][LINES] = {{0}}, lines = 0;
    for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char want[256];
        int r, i;
        assert_int_equal(
            sscanf(strstr(l, "thread ") ? strstr(l, "thread ") : "", "thread %d line %d", &r, &i),
            2);
        assert_true(r >= 0 && r < THREADS && i >= 0 && i < LINES);
        snprintf(want, sizeof want, "%s:%d:3/%d GCL WARN coll: thread %d line %d", host,
                 (int)getpid(), r, r, i);
        assert_string_equal(l, want);
        seen[r][i]++;
        lines++;
    }
    assert_int_equal(lines, THREADS * LINES);
    for (int r = 0; r < THREADS; r++)
        for (int i = 0; i < LINES; i++)
            assert_int_equal(seen[r][i], 1);
    free(text);
}

static void log_levels(void)
{
    gcl_log_level = GCL_LOG_INFO;
    gcl_log_subsys = GCL_SUB_SHM;
    GCL_INFO(GCL_SUB_SHM, "shown");
    GCL_INFO(GCL_SUB_COLL, "not this subsystem");
    GCL_DEBUG(GCL_SUB_SHM, "not this level");
    GCL_WARN(GCL_SUB_COLL, "warnings always");
    gcl_log_level = GCL_LOG_WARN;
    gcl_log_subsys = GCL_SUB_ALL;
}

static void test_levels(void **state)
{
    (void)state;
    gcl_log_set_instance(-1);
    gcl_log_set_replica(-1);
    char *text = capture(log_levels);
    char host[64] = "", want[512];
    gethostname(host, sizeof host - 1);
    snprintf(want, sizeof want,
             "%s:%d:-/- GCL INFO shm: shown\n%s:%d:-/- GCL WARN coll: warnings always\n", host,
             (int)getpid(), host, (int)getpid());
    assert_string_equal(text, want);
    free(text);
    int level;
    unsigned subsys;
    assert_int_equal(gcl_log_parse_level("DeBuG", &level), 0);
    assert_int_equal(level, GCL_LOG_DEBUG);
    assert_int_equal(gcl_log_parse_level("loud", &level), -1);
    assert_int_equal(gcl_log_parse_subsys("init,ofi", &subsys), 0);
    assert_int_equal(subsys, GCL_SUB_INIT | GCL_SUB_OFI);
    assert_int_equal(gcl_log_parse_subsys("init,,nope", &subsys), -1);
    assert_int_equal(gcl_log_parse_subsys("", &subsys), -1);
}

static void log_timed(void)
{
    gcl_log_time = 1;
    GCL_WARN(GCL_SUB_COLL, "timed");
    gcl_log_time = 0;
}

/* GCL_LOG_TIME: the line starts with the wall-clock time, within a second of now. */
static void test_time_prefix(void **state)
{
    (void)state;
    gcl_log_set_instance(-1);
    gcl_log_set_replica(-1);
    time_t before = time(NULL);
    char *text = capture(log_timed);
    int hh, mm, ss, ms;
    char rest[256];
    assert_int_equal(sscanf(text, "%2d:%2d:%2d.%3d %255[^\n]", &hh, &mm, &ss, &ms, rest), 5);
    assert_int_equal(text[12], ' ');
    struct tm tm;
    localtime_r(&before, &tm);
    int got = hh * 3600 + mm * 60 + ss, want = tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec;
    assert_true(ms >= 0 && ms < 1000);
    assert_true((got - want + 86400) % 86400 <= 1);
    assert_non_null(strstr(rest, " GCL WARN coll: timed"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_time_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
