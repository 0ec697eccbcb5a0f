/*
 * The whole sim/ API in one include: time units, the GC200 device model, per-IPU memory
 * accounting, topologies and routes, the link cost model, statistics, reports and traces; and
 * the workload side: layers, models and model files, the per-layer IPU cost model and its
 * constants, pipelines, job plans (stage split and memory), and the host data feed.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include "sim/cost/bsp_cost.h"
#include "sim/cost/cost.h"
#include "sim/device/device.h"
#include "sim/cost/feed.h"
#include "sim/cost/ipu_cost.h"
#include "sim/cost/ipu_gemm.h"
#include "sim/cost/layer.h"
#include "sim/device/memory.h"
#include "sim/model/model.h"
#include "sim/model/model_builtin.h"
#include "sim/model/model_def.h"
#include "sim/model/model_file.h"
#include "sim/cost/optimizer.h"
#include "sim/device/params.h"
#include "sim/schedule/pipeline.h"
#include "sim/plan/plan.h"
#include "sim/report/report.h"
#include "sim/base/time.h"
#include "sim/topology/topology.h"
#include "sim/topology/topology_graph.h"
#include "sim/report/trace.h"

#endif /* SIM_SIM_H */
