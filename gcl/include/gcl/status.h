/*
 * Status codes. Every libgcl call that can fail returns one; GCL_OK is 0 and errors are negative.
 * gcl_status_string() names each; gcl_last_error() (gcl.h) gives the detail of the last failure.
 */
#ifndef GCL_STATUS_H
#define GCL_STATUS_H

/* X(name, value, description): one table generates the enum and the strings. */
#define GCL_STATUS_MAP(X)                                                                          \
    X(GCL_OK, 0, "success")                                                                        \
    X(GCL_ERR_INVALID_ARGUMENT, -1, "invalid argument")                                            \
    X(GCL_ERR_OUT_OF_MEMORY, -2, "out of simulated IPU memory")                                    \
    X(GCL_ERR_NO_HOST_MEMORY, -3, "out of host memory")                                            \
    X(GCL_ERR_TIMEOUT, -4, "timed out waiting for a peer")                                         \
    X(GCL_ERR_MISMATCH, -5, "replicas called mismatched collectives")                              \
    X(GCL_ERR_PEER_FAILED, -6, "a peer replica or instance failed")                                \
    X(GCL_ERR_SYSTEM, -7, "operating system call failed")                                          \
    X(GCL_ERR_MPI, -8, "MPI call failed")                                                          \
    X(GCL_ERR_TRANSPORT, -9, "transport failure")                                                  \
    X(GCL_ERR_NOT_SUPPORTED, -10, "not supported")                                                 \
    X(GCL_ERR_ABORTED, -11, "aborted because another IPU of this instance failed")                 \
    X(GCL_ERR_INTERNAL, -12, "internal error")                                                     \
    X(GCL_ERR_IN_PROGRESS, -13, "operation still in progress")

typedef enum {
#define GCL_STATUS_ENUM(name, value, text) name = value,
    GCL_STATUS_MAP(GCL_STATUS_ENUM)
#undef GCL_STATUS_ENUM
} gcl_status_t;

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)
/* A short description of STATUS ("timed out waiting for a peer"); never NULL. */
const char *gcl_status_string(gcl_status_t status);
/* The enumerator's name ("GCL_ERR_TIMEOUT"); never NULL. */
const char *gcl_status_name(gcl_status_t status);
#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

/* Returns from the enclosing function when CALL fails. */
#define GCL_CHECK(call)                                                                            \
    do {                                                                                           \
        gcl_status_t gcl_check_rc_ = (call);                                                       \
        if (gcl_check_rc_ != GCL_OK)                                                               \
            return gcl_check_rc_;                                                                  \
    } while (0)

/* Stores CALL's status in RC and jumps to LABEL when it fails. */
#define GCL_CHECK_GOTO(call, rc, label)                                                            \
    do {                                                                                           \
        (rc) = (call);                                                                             \
        if ((rc) != GCL_OK)                                                                        \
            goto label;                                                                            \
    } while (0)

#endif /* GCL_STATUS_H */
