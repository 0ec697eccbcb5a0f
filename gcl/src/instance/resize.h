/*
 * An elastic instance's resize (gcl/elastic.h): the instance torn down and built again for the
 * next membership (instance/membership.h).
 */
#ifndef GCL_INSTANCE_ELASTIC_H
#define GCL_INSTANCE_ELASTIC_H

#include "gcl/status.h"

struct gcl_instance;

/* gcl_elastic_resize's work, between two gcl_run calls: the next membership, and the instance
 * torn down and built again for it, again while instances are lost during the build. GCL_OK,
 * or the failure in the instance's error record. */
gcl_status_t gcl_elastic_rebuild(struct gcl_instance *inst);

#endif /* GCL_INSTANCE_ELASTIC_H */
