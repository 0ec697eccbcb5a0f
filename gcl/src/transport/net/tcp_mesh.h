/*
 * The tcp backend's connections: one TCP stream between every pair of instances, made once at
 * start-up. Every instance listens on an ephemeral port, the addresses go round through the
 * bootstrap, each instance connects to those after it and accepts those before it, and each
 * connection opens with a hello that names the connecting instance and carries the job's token.
 * The listener is closed once every instance is connected: nothing can join the mesh later.
 */
#ifndef GCL_TCP_MESH_H
#define GCL_TCP_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "base/param.h"
#include "gcl/status.h"
#include "job/bootstrap.h"
#include "job/job.h"

/* Fills FDS[num_instances] with a connected, non-blocking stream to each other instance (-1 for
 * this one). Collective over the instances: every instance calls it, and one that fails before
 * the address exchange still takes part in it, so that all fail alike instead of waiting. On
 * failure, a sentence in ERR and every descriptor closed. */
gcl_status_t gcl_tcp_mesh(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                          const uint8_t token[16], int *fds, char *err, size_t len);

#endif /* GCL_TCP_MESH_H */
