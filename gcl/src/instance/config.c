/*
 * gcl_config_t: reading a caller's config of any size, applying its fields over the GCL_*
 * variables, the text of gcl_init's last failure, and the library's version; see config.h.
 */
#include "instance/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

/* The failure of the last gcl_init on this thread: the caller gets no instance to ask. */
static _Thread_local char init_error[2048];

/* The size of the gcl_config_t of the first release with a size field: the fields before
 * phantom. A caller's SIZE is at least this, or 0. */
#define CONFIG_MIN_SIZE offsetof(gcl_config_t, phantom)

static gcl_status_t refuse(gcl_status_t rc, char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static gcl_status_t refuse(gcl_status_t rc, char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return rc;
}

/* Copies the caller's CFG of cfg->size bytes into OUT, a gcl_config_t of this library. */
static gcl_status_t read_sized(const gcl_config_t *cfg, gcl_config_t *out, char *err, size_t len)
{
    gcl_config_t def = GCL_CONFIG_INITIALIZER;
    *out = def;
    if (!cfg)
        return GCL_OK;
    size_t size = cfg->size ? cfg->size : sizeof *cfg;
    if (size < CONFIG_MIN_SIZE || size > (1u << 16))
        return refuse(GCL_ERR_INVALID_ARGUMENT, err, len,
                      "gcl_config_t.size is %zu: initialise the config with "
                      "GCL_CONFIG_INITIALIZER",
                      cfg->size);
    /* A newer caller's fields that this library does not know must be zero. */
    const unsigned char *bytes = (const unsigned char *)cfg;
    for (size_t i = sizeof *out; i < size; i++) {
        if (bytes[i] != 0)
            return refuse(GCL_ERR_NOT_SUPPORTED, err, len,
                          "gcl_config_t of version %u sets a field (byte %zu of %zu) that this "
                          "libgcl %s does not know",
                          cfg->version, i, size, gcl_version_string());
    }
    memcpy(out, cfg, size < sizeof *out ? size : sizeof *out);
    out->size = sizeof *out;
    return GCL_OK;
}

gcl_status_t gcl_config_apply(const gcl_config_t *cfg, gcl_config_t *out, gcl_params_t *p,
                              char *err, size_t len)
{
    GCL_CHECK(read_sized(cfg, out, err, len));
    if (out->num_replicas < 0 || out->ipus_per_replica < 0)
        return refuse(GCL_ERR_INVALID_ARGUMENT, err, len,
                      "negative replicas or IPUs in the configuration");
    if (out->phantom < 0 || out->phantom > 1 || out->mpi_world < -1 || out->mpi_world > 1)
        return refuse(GCL_ERR_INVALID_ARGUMENT, err, len,
                      "gcl_config_t.phantom takes 0 or 1 and .mpi_world -1, 0 or 1, not %d and %d",
                      out->phantom, out->mpi_world);
    /* Without the program's own numbers, the variables' (a plain mpirun job's per rank). */
    if (out->num_replicas == 0)
        out->num_replicas = (int)p->num_local_replicas;
    if (out->ipus_per_replica == 0)
        out->ipus_per_replica = (int)p->ipus_per_replica;
    if (out->log_level < GCL_LOG_LEVEL_DEFAULT || out->log_level > GCL_LOG_LEVEL_TRACE)
        return refuse(GCL_ERR_INVALID_ARGUMENT, err, len,
                      "gcl_config_t.log_level %d is not a gcl_log_level_t", out->log_level);
    if (out->topology && strlen(out->topology) >= sizeof p->topology)
        return refuse(GCL_ERR_INVALID_ARGUMENT, err, len,
                      "gcl_config_t.topology is longer than %zu characters",
                      sizeof p->topology - 1);
    if (out->phantom)
        p->sim_phantom = 1;
    if (out->topology && out->topology[0])
        snprintf(p->topology, sizeof p->topology, "%s", out->topology);
    if (out->log_level != GCL_LOG_LEVEL_DEFAULT)
        p->log_level = out->log_level - 1; /* gcl_log_level_t counts from DEFAULT */
    return GCL_OK;
}

void gcl_init_error_set(const char *text)
{
    snprintf(init_error, sizeof init_error, "%s", text);
}

const char *gcl_init_error(void)
{
    return init_error;
}

int gcl_version(void)
{
    return GCL_VERSION_CODE;
}

const char *gcl_version_string(void)
{
#define GCL_STR_(x) #x
#define GCL_STR(x)  GCL_STR_(x)
    return GCL_STR(GCL_VERSION_MAJOR) "." GCL_STR(GCL_VERSION_MINOR) "." GCL_STR(GCL_VERSION_PATCH);
}
