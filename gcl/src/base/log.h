/*
 * Logging. GCL_LOG_LEVEL picks how much: Graphcore's OFF, ERR, WARN, INFO, DEBUG, TRACE, or ours
 * none, warn, info, debug, trace, in any case. GCL_LOG_SUBSYS=init,coll,... (or "all") picks
 * which subsystems print below warn. Every line starts with host:pid:instance/replica, because
 * the logs of a job are read interleaved. The level is checked before the arguments are
 * evaluated.
 */
#ifndef GCL_LOG_H
#define GCL_LOG_H

/* The public gcl_log_level_t minus one (GCL_LOG_LEVEL_OFF is GCL_LOG_NONE). */
enum {
    GCL_LOG_NONE = 0,
    GCL_LOG_ERROR = 1, /* a failure being returned (gcl_init's reason) */
    GCL_LOG_WARN = 2,
    GCL_LOG_INFO = 3,
    GCL_LOG_DEBUG = 4,
    GCL_LOG_TRACE = 5
};

enum {
    GCL_SUB_INIT = 1u << 0,
    GCL_SUB_COLL = 1u << 1,
    GCL_SUB_SIM = 1u << 2,
    GCL_SUB_SHM = 1u << 3,
    GCL_SUB_OFI = 1u << 4,
    GCL_SUB_ENV = 1u << 5,
    GCL_SUB_MPI = 1u << 6,
    GCL_SUB_TCP = 1u << 7,
    GCL_SUB_ALL = ~0u,
};

extern int gcl_log_level;
extern unsigned gcl_log_subsys;
extern int gcl_log_time; /* 1: lines start with the wall-clock time (GCL_LOG_TIME) */

/* Parses GCL_LOG_LEVEL / GCL_LOG_SUBSYS values. Return 0, or -1 for a value that is not one. */
int gcl_log_parse_level(const char *text, int *out);
int gcl_log_parse_subsys(const char *text, unsigned *out);
/* Sets the instance index for the prefix (-1 before it is known). */
void gcl_log_set_instance(int instance);
/* Sets the calling thread's replica for the prefix (-1: not an IPU thread). */
void gcl_log_set_replica(int replica);

void gcl_log_emit(int level, unsigned subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define GCL_LOG(level, subsys, ...)                                                                \
    do {                                                                                           \
        if ((level) <= gcl_log_level && ((level) <= GCL_LOG_WARN || (gcl_log_subsys & (subsys))))  \
            gcl_log_emit((level), (subsys), __VA_ARGS__);                                          \
    } while (0)

#define GCL_ERROR(subsys, ...) GCL_LOG(GCL_LOG_ERROR, subsys, __VA_ARGS__)
#define GCL_WARN(subsys, ...)  GCL_LOG(GCL_LOG_WARN, subsys, __VA_ARGS__)
#define GCL_INFO(subsys, ...)  GCL_LOG(GCL_LOG_INFO, subsys, __VA_ARGS__)
#define GCL_DEBUG(subsys, ...) GCL_LOG(GCL_LOG_DEBUG, subsys, __VA_ARGS__)
#define GCL_TRACE(subsys, ...) GCL_LOG(GCL_LOG_TRACE, subsys, __VA_ARGS__)

#endif /* GCL_LOG_H */
