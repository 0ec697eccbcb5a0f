/*
 * gcl_config_t inside libgcl: its fields over the GCL_* variables, and gcl_init's error text.
 */
#ifndef GCL_CONFIG_INTERNAL_H
#define GCL_CONFIG_INTERNAL_H

#include <stddef.h>

#include "gcl/gcl.h"
#include "base/param.h"

/* Reads the caller's CFG (NULL, or a gcl_config_t of cfg->size bytes from any release) into
 * OUT, this release's layout, and applies its fields to P, the parameters read from the
 * environment: a set phantom, topology or log_level wins over its variable. Returns GCL_OK,
 * GCL_ERR_INVALID_ARGUMENT (a bad field) or GCL_ERR_NOT_SUPPORTED (a newer caller's field this
 * library does not know), with one line in ERR. */
gcl_status_t gcl_config_apply(const gcl_config_t *cfg, gcl_config_t *out, gcl_params_t *p,
                              char *err, size_t len);

/* Records TEXT as the calling thread's gcl_init_error(). */
void gcl_init_error_set(const char *text);

#endif /* GCL_CONFIG_INTERNAL_H */
