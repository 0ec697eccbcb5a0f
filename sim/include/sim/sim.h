/*
 * The whole sim/ API in one include: time units, the GC200 device model, per-IPU memory
 * accounting, topologies and routes, the link cost model, statistics, reports and traces; and
 * the workload side: layers, models and model files, the per-layer IPU cost model and its
 * constants, pipelines, job plans (stage split and memory), and the host data feed.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include "sim/bsp_cost.h"
#include "sim/cost.h"
#include "sim/device.h"
#include "sim/feed.h"
#include "sim/ipu_cost.h"
#include "sim/ipu_gemm.h"
#include "sim/layer.h"
#include "sim/memory.h"
#include "sim/model.h"
#include "sim/model_builtin.h"
#include "sim/model_def.h"
#include "sim/model_file.h"
#include "sim/optimizer.h"
#include "sim/params.h"
#include "sim/pipeline.h"
#include "sim/plan.h"
#include "sim/report.h"
#include "sim/time.h"
#include "sim/topology.h"
#include "sim/topology_graph.h"
#include "sim/trace.h"

#endif /* SIM_SIM_H */
