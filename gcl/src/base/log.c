/* Logging to stderr with a host:pid:instance/replica prefix; see log.h. */
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int gcl_log_level = GCL_LOG_WARN;
unsigned gcl_log_subsys = GCL_SUB_ALL;
int gcl_log_time = 0;

static int log_instance = -1;
static _Thread_local int log_replica = -1;

/* As printed, by level; GCL_LOG_LEVEL also takes the aliases below. */
static const char *const level_names[] = {"NONE", "ERR", "WARN", "INFO", "DEBUG", "TRACE"};

static const struct {
    const char *name;
    int level;
} level_aliases[] = {
    {"off", GCL_LOG_NONE}, /* Graphcore's */
    {"error", GCL_LOG_ERROR},
    {"warning", GCL_LOG_WARN},
};

static const struct {
    const char *name;
    unsigned bit;
} subsystems[] = {
    {"init", GCL_SUB_INIT}, {"coll", GCL_SUB_COLL}, {"sim", GCL_SUB_SIM},
    {"shm", GCL_SUB_SHM},   {"ofi", GCL_SUB_OFI},   {"env", GCL_SUB_ENV},
    {"mpi", GCL_SUB_MPI},   {"tcp", GCL_SUB_TCP},   {"all", GCL_SUB_ALL},
};

int gcl_log_parse_level(const char *text, int *out)
{
    for (int i = 0; i <= GCL_LOG_TRACE; i++) {
        if (strcasecmp(text, level_names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof level_aliases / sizeof level_aliases[0]; i++) {
        if (strcasecmp(text, level_aliases[i].name) == 0) {
            *out = level_aliases[i].level;
            return 0;
        }
    }
    return -1;
}

int gcl_log_parse_subsys(const char *text, unsigned *out)
{
    unsigned bits = 0;
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return -1;
    strcpy(buf, text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof subsystems / sizeof subsystems[0]; i++)
            if (strcasecmp(tok, subsystems[i].name) == 0)
                break;
        if (i == sizeof subsystems / sizeof subsystems[0])
            return -1;
        bits |= subsystems[i].bit;
    }
    if (bits == 0)
        return -1;
    *out = bits;
    return 0;
}

void gcl_log_set_instance(int instance)
{
    log_instance = instance;
}

void gcl_log_set_replica(int replica)
{
    log_replica = replica;
}

static const char *subsys_name(unsigned subsys)
{
    for (size_t i = 0; i < sizeof subsystems / sizeof subsystems[0]; i++)
        if (subsystems[i].bit == subsys)
            return subsystems[i].name;
    return "gcl";
}

/* The host name of the prefix, read once: the first lines of several IPU threads may come at
 * the same moment, and each writing the name while another reads it was a data race. */
static char log_host[64];
static pthread_once_t log_host_once = PTHREAD_ONCE_INIT;

static void read_host(void)
{
    if (gethostname(log_host, sizeof log_host - 1) != 0)
        strcpy(log_host, "?");
}

void gcl_log_emit(int level, unsigned subsys, const char *fmt, ...)
{
    pthread_once(&log_host_once, read_host);
    const char *host = log_host;
    char inst[16] = "-", repl[16] = "-", msg[1024];
    if (log_instance >= 0)
        snprintf(inst, sizeof inst, "%d", log_instance);
    if (log_replica >= 0)
        snprintf(repl, sizeof repl, "%d", log_replica);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char when[24] = "";
    if (gcl_log_time) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        localtime_r(&ts.tv_sec, &tm);
        snprintf(when, sizeof when, "%02d:%02d:%02d.%03d ", tm.tm_hour % 24, tm.tm_min % 60,
                 tm.tm_sec % 61, (int)(ts.tv_nsec / 1000000) % 1000);
    }
    /* One write per line, so lines of different threads do not interleave. */
    fprintf(stderr, "%s%s:%d:%s/%s GCL %s %s: %s\n", when, host, (int)getpid(), inst, repl,
            level_names[level < 0 || level > GCL_LOG_TRACE ? 0 : level], subsys_name(subsys), msg);
}
