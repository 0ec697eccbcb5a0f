/*
 * The whole sim/ API in one include: time units, the GC200 device model, per-IPU memory
 * accounting, topologies and routes, the link cost model, statistics, reports and traces.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include "sim/cost.h"
#include "sim/device.h"
#include "sim/memory.h"
#include "sim/report.h"
#include "sim/time.h"
#include "sim/topology.h"

#endif /* SIM_SIM_H */
