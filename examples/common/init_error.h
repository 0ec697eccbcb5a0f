/*
 * What an example program adds when gcl_init fails with a usage error. libgcl has logged the
 * reason (gcl.h, at level ERR): one line that names the GCL_* variable or setting, its value and
 * what it expects. That line is the whole refusal, as for a bad option, so the program does not
 * repeat it; its exit status says it was a usage error. With GCL_LOG_LEVEL=OFF (or none) the
 * program prints the reason itself, from gcl_init_error().
 */
#ifndef EXAMPLES_INIT_ERROR_H
#define EXAMPLES_INIT_ERROR_H

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "gcl/gcl.h"

/* After gcl_init returned RC: for GCL_ERR_INVALID_ARGUMENT (a bad variable or configuration)
 * returns 2, the exit status of a usage error, having printed a line of its own (PROG: ...)
 * only when GCL_LOG_LEVEL=off hid libgcl's. Returns 0 for any other status, which the caller
 * reports. */
static inline int example_init_usage_error(const char *prog, gcl_status_t rc)
{
    if (rc != GCL_ERR_INVALID_ARGUMENT)
        return 0;
    const char *level = getenv("GCL_LOG_LEVEL");
    if (level && (strcasecmp(level, "none") == 0 || strcasecmp(level, "off") == 0))
        fprintf(stderr, "%s: gcl_init failed: %s\n", prog, gcl_init_error());
    return 2;
}

#endif
