/*
 * The one error path of libgcl. A failure is described once, where it happens, into the error
 * record of whatever it belongs to: the instance (gcl_init, gcl_run), an IPU context (calls
 * without a communicator: point-to-point, simulated memory), a communicator (gcl_last_error) or
 * a request in flight. When a request retires, its record moves to its communicator or context:
 * the text is handed over, never copied. Texts live on the heap, as long as they need.
 *
 * GCL_CHECK and GCL_CHECK_GOTO inside libgcl also log, at debug level, every level a failure
 * passes through (file:line and status), so that GCL_LOG_LEVEL=debug reads a failure's path back.
 */
#ifndef GCL_ERR_H
#define GCL_ERR_H

#include "gcl/status.h"
#include "base/log.h"

typedef struct {
    gcl_status_t status; /* GCL_OK when clear */
    char *text;          /* heap, or NULL when clear */
} gcl_err_t;

#define GCL_ERR_INIT                                                                               \
    {                                                                                              \
        GCL_OK, NULL                                                                               \
    }

/* Records STATUS and the formatted sentence in E (replacing what was there); returns STATUS. */
gcl_status_t gcl_err_set(gcl_err_t *e, gcl_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hands SRC's failure to DST (which loses its own); SRC is clear afterwards. */
void gcl_err_move(gcl_err_t *dst, gcl_err_t *src);
void gcl_err_clear(gcl_err_t *e);
/* Puts PREFIX in front of E's sentence (a failure learnt below the level that knows its
 * context: a transport's, given the call it happened in). */
void gcl_err_prefix(gcl_err_t *e, const char *prefix);
/* The sentence, "" when clear; valid until E changes. */
const char *gcl_err_text(const gcl_err_t *e);

#undef GCL_CHECK
#undef GCL_CHECK_GOTO
#define GCL_CHECK(call)                                                                            \
    do {                                                                                           \
        gcl_status_t gcl_check_rc_ = (call);                                                       \
        if (gcl_check_rc_ != GCL_OK) {                                                             \
            GCL_DEBUG(GCL_SUB_ALL, "%s:%d -> %s", __FILE__, __LINE__,                              \
                      gcl_status_name(gcl_check_rc_));                                             \
            return gcl_check_rc_;                                                                  \
        }                                                                                          \
    } while (0)
#define GCL_CHECK_GOTO(call, rc, label)                                                            \
    do {                                                                                           \
        (rc) = (call);                                                                             \
        if ((rc) != GCL_OK) {                                                                      \
            GCL_DEBUG(GCL_SUB_ALL, "%s:%d -> %s", __FILE__, __LINE__, gcl_status_name(rc));        \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

#endif /* GCL_ERR_H */
