/*
 * The cost model's constants: defaults, sources and ranges (sim/device/params.h), and the setters the
 * topology parser uses.
 *
 * Sources:
 *   [M2000]   Graphcore, IPU-M2000 and Bow-2000 datasheets (docs.graphcore.ai): IPU-Link
 *             512 Gb/s, GW-Link 2 x 100 Gb/s, Sync-Link hardware BSP, 4 GC200s per machine.
 *   [PODDA]   Graphcore, "IPU-POD DA build and test guide": each IPU-M2000 has one 100 GbE
 *             RoCEv2 NIC card for host connectivity; the host server needs a 100 GbE RoCEv2
 *             NIC; 128 GB of Streaming Memory per IPU-M2000.
 *   [POD]     Graphcore, IPU-POD64 / IPU-POD128 datasheets: 1 to 4 host servers per IPU-POD64
 *             rack ("default number of servers is 1, however up to 4 host servers may be
 *             required depending on workload"); IPU-POD4/16 DA: one server by default.
 *   [ISA]     Graphcore, Tile Vertex ISA and IPU Programmer's Guide: 64-bit vector
 *             instructions (f16v4, f32v2), the AMP's 64 f16 (16 f32) multiply-adds per cycle.
 *   [JIA]     Jia, Tillman, Maggioni, Scarpazza, "Dissecting the Graphcore IPU Architecture via
 *             Microbenchmarking", arXiv:1912.03413 (Mk1): on-chip latencies of tens to hundreds
 *             of cycles, IPU-Link latencies of the order of a microsecond, slowing 4-7.7x under
 *             full load; compiled code reaching a fraction of the hand-written loops' peaks.
 *   [CAL]     scripts/calibrate: fitted by least squares on the log error to the 11 runs of
 *             Graphcore's MLPerf Training v1.0 and v1.1 results (ResNet-50 on IPU-POD16 to
 *             IPU-POD256, BERT-Large on IPU-POD16 to IPU-POD128; docs/validation.md). The range
 *             is the belief before the fit: its geometric middle and width are the fit's weak
 *             prior. reduction_buffer_bytes is fitted per round; its default is v1.1's.
 *   [PCIE]    GC200 product page: host link PCI Express Gen4 x16, 64 GB/s (32 GB/s each way):
 *             an IPU's path to its IPU-M2000's gateway and Streaming Memory.
 *   [HSYNC]   Graphcore, Command-line tools, gc-hostsynclatencytest ("tests the sync latency
 *             between host and IPU in microseconds"): its example issues 4,095 syncs (each after
 *             32 delay instructions of 5 cycles) and reports 1,485 us for all of them: 0.36 us
 *             a sync, delays included. One sync of the IPUs with the host is therefore well
 *             under a microsecond on the IPU's side; with a RoCE round trip from the IPU
 *             through its gateway to the host server and back (assumed, about 20 us) it is
 *             tens of microseconds at most. host_sync_ns's range, 20 us to 1,485 us, is NOT
 *             sourced: the fit needs about 1.4 ms a PopART cycle (the BERT-Large 4- and
 *             8-stage pairs force it, docs/validation.md), 30 to 4,000 times what one host sync
 *             costs, so the constant stands for a per-cycle cost the model lacks, not one sync.
 *             (An earlier reading took 1,485 us for one sync.)
 *   [SYNCPAT] Graphcore, PopART user guide, "Sync configuration": with the default (Full) sync
 *             pattern, any communication between the IPUs or with the host makes all IPUs
 *             synchronise.
 *   [TFIO]    Graphcore, TensorFlow user guide, "Efficient IPU I/O": the infeed prefetches
 *             dataset elements into Streaming Memory; the IPU's stream copy from there
 *             (StreamCopyMid) blocks compute unless I/O tiles are set aside.
 */
#include "sim/device/params.h"

#include <errno.h>
#include <string.h>

/* The defaults. Keep in step with the table below (a unit test checks that they agree). */
void sim_cost_params_default(sim_cost_params_t *cp)
{
    *cp = (sim_cost_params_t){
        .amp_efficiency = 0.625,
        .conv_efficiency = 1.0,
        .host_sync = 1448311335ULL, /* ps: 1,448,311.335 ns */
        .reduction_buffer_bytes = 4275551ULL,
        .gateway_domain_bandwidth = 25414000000ULL,
        .gateway_ipu_bandwidth = 32000000000ULL,
        .vector_efficiency = 0.5,
        .exchange_efficiency = 0.9,
        .compute_set_overhead = 250 * SIM_PS_PER_NS,
        .tile_sync = 100 * SIM_PS_PER_NS,
        .amp_k_group = {[SIM_PREC_F16] = 16, [SIM_PREC_F32] = 8},
        .amp_n_group = 4,
        .vector_lanes = {[SIM_PREC_F16] = 4, [SIM_PREC_F32] = 2},
        .code_bytes_per_tile = 48 * 1024,
        .code_bytes_per_layer = 192,
        .host_servers = 0,
        .host_nic_bandwidth = 12500000000ULL,
        .gateway_bandwidth = 12500000000ULL,
        .prefetch_depth = 2,
        .streaming_bandwidth = 10000000000ULL,
    };
}

#define F  SIM_UNIT_FRACTION
#define NS SIM_UNIT_NS
#define GB SIM_UNIT_GBS
#define B  SIM_UNIT_BYTES
#define N  SIM_UNIT_COUNT

static const sim_param_info_t params[] = {
    {"amp_efficiency", SIM_PARAM_FITTED, F, 0.625, 0.3, 0.9, 0,
     "[CAL]: the AMP's sustained share of its peak in a product's compute set"},
    {"conv_efficiency", SIM_PARAM_ASSUMED, F, 1.0, 0.7, 1.0, 0,
     "assumed: a convolution's share of the AMP peak over a matmul's (kernel positions)"},
    {"host_sync_ns", SIM_PARAM_FITTED, NS, 1448311.335, 20000, 1485000, 0,
     "[CAL]; range assumed, not sourced: the host's cost per PopART cycle [SYNCPAT], which "
     "the fit needs at about 1.4 ms; one host sync is 0.36 us to tens of us [HSYNC]"},
    {"reduction_buffer_bytes", SIM_PARAM_FITTED, B, 4275551, 262144, 67108864, 0,
     "[CAL], per round (software): gradient bytes per reduction call; from one call per "
     "ResNet-50 tensor (0.32 MB on average) to one per 64 MB"},
    {"gateway_domain_gbs", SIM_PARAM_FITTED, GB, 25.414, 10, 400, 0,
     "[CAL]; [M2000]: a domain's traffic to the others, from one GW-Link port (80% of "
     "100 Gb/s) to all 32 ports of its 16 gateways"},
    {"gateway_ipu_gbs", SIM_PARAM_SOURCED, GB, 32, 16, 32, 0,
     "[PCIE]: one IPU's hop to its gateway, PCIe Gen4 x16 one way (50-100% reached)"},
    {"vector_efficiency", SIM_PARAM_ASSUMED, F, 0.5, 0.25, 1.0, 0,
     "assumed; [JIA]: compiled vector loops reach a quarter to all of the vector peak"},
    {"exchange_efficiency", SIM_PARAM_ASSUMED, F, 0.9, 0.5, 1.0, 0,
     "assumed share of the 8 TB/s exchange a compiled exchange program reaches"},
    {"compute_set_overhead_ns", SIM_PARAM_ASSUMED, NS, 250, 100, 1000, 0,
     "assumed: launching one compute set's vertices on 6 worker threads of every tile ([JIA])"},
    {"tile_sync_ns", SIM_PARAM_ASSUMED, NS, 100, 50, 500, 0,
     "assumed: one hardware sync of the 1472 tiles, about 130 cycles ([JIA]: tens to hundreds)"},
    {"amp_k_group_f16", SIM_PARAM_ASSUMED, N, 16, 8, 32, 0,
     "assumed: input channels the AMP consumes at once in f16 (64 MACs = 16 in x 4 out) [ISA]"},
    {"amp_k_group_f32", SIM_PARAM_ASSUMED, N, 8, 4, 16, 0,
     "assumed: input channels the AMP consumes at once in f32 (16 MACs = 8 x 2) [ISA]"},
    {"amp_n_group", SIM_PARAM_ASSUMED, N, 4, 1, 16, 0,
     "assumed: output channels the AMP produces at once [ISA]"},
    {"vector_lanes_f16", SIM_PARAM_SOURCED, N, 4, 4, 4, 0, "[ISA]: 64-bit f16v4 instructions"},
    {"vector_lanes_f32", SIM_PARAM_SOURCED, N, 2, 2, 2, 0, "[ISA]: 64-bit f32v2 instructions"},
    {"code_bytes_per_tile", SIM_PARAM_ASSUMED, B, 49152, 16384, 98304, 0,
     "assumed: code, stacks and exchange code of every program, per tile"},
    {"code_bytes_per_layer", SIM_PARAM_ASSUMED, B, 192, 64, 512, 0,
     "assumed: a layer's vertex state, descriptors and exchange code, per tile"},
    {"host_servers", SIM_PARAM_ASSUMED, N, 0, 0, 0, 0,
     "[POD]: 1 per IPU-POD16 DA, 1-4 per IPU-POD64; default (0) one per 16 IPUs of the job"},
    {"host_nic_gbs", SIM_PARAM_SOURCED, GB, 12.5, 10, 12.5, 0,
     "[PODDA]: one 100 GbE RoCEv2 NIC per host server (line rate; 80-100% of it reached)"},
    {"gateway_gbs", SIM_PARAM_SOURCED, GB, 12.5, 10, 12.5, 0,
     "[PODDA]: one 100 GbE RoCEv2 NIC card per IPU-M2000 (line rate; 80-100% reached)"},
    {"prefetch_depth", SIM_PARAM_ASSUMED, N, 2, 1, 8, 0,
     "assumed: micro-batches the host prepares ahead of the IPU (Poplar data streams)"},
    {"streaming_gbs", SIM_PARAM_ASSUMED, GB, 10, 5, 20, 0,
     "assumed: one IPU's rate to and from Streaming Memory [PODDA]: each micro-batch's input "
     "[TFIO] and off-chip optimizer state; [PCIE] bounds it"},
    {"ipulink_bandwidth_gbs", SIM_PARAM_ASSUMED, GB, 32, 32, 128, 1,
     "[M2000]: 512 Gb/s per IPU-Link; assumed one link per ladder edge (bonding unpublished)"},
    {"ipulink_latency_ns", SIM_PARAM_ASSUMED, NS, 500, 200, 2000, 1,
     "assumed; [JIA] measured Mk1 IPU-Link latencies of this order"},
    {"gwlink_bandwidth_gbs", SIM_PARAM_SOURCED, GB, 12.5, 10, 12.5, 1,
     "[M2000]: GW-Link 2 x 100 Gb/s per IPU-M2000 (line rate; 80-100% of it reached)"},
    {"gwlink_latency_ns", SIM_PARAM_ASSUMED, NS, 3000, 1000, 10000, 1,
     "assumed: one 100 GbE RoCE hop between gateways"},
    {"sync_latency_ns", SIM_PARAM_ASSUMED, NS, 1000, 300, 3000, 1,
     "assumed: one Sync-Link BSP synchronisation inside an IPU-Link domain [M2000]"},
    {"gw_sync_latency_ns", SIM_PARAM_ASSUMED, NS, 5000, 2000, 20000, 1,
     "assumed: added when a synchronisation spans domains (packetised over GW-Links)"},
};

#define NPARAMS (sizeof(params) / sizeof(params[0]))

size_t sim_param_count(void)
{
    return NPARAMS;
}

const sim_param_info_t *sim_param_get(size_t i)
{
    return i < NPARAMS ? &params[i] : NULL;
}

const sim_param_info_t *sim_param_find(const char *key)
{
    for (size_t i = 0; key && i < NPARAMS; i++)
        if (strcmp(params[i].key, key) == 0)
            return &params[i];
    return NULL;
}

const char *sim_param_kind_name(sim_param_kind_t k)
{
    return k == SIM_PARAM_SOURCED ? "sourced" : k == SIM_PARAM_FITTED ? "fitted" : "assumed";
}

const char *sim_param_unit_name(sim_param_unit_t u)
{
    static const char *const names[] = {"", "ns", "GB/s", "bytes", ""};

    return (int)u >= 0 && u <= SIM_UNIT_COUNT ? names[u] : "";
}

/* Where each cost-model key lives in sim_cost_params_t. */
enum slot { S_DOUBLE, S_TIME, S_U32, S_U64, S_INT };

static const struct field {
    const char *key;
    enum slot slot;
    size_t off;
} fields[] = {
    {"amp_efficiency", S_DOUBLE, offsetof(sim_cost_params_t, amp_efficiency)},
    {"conv_efficiency", S_DOUBLE, offsetof(sim_cost_params_t, conv_efficiency)},
    {"host_sync_ns", S_TIME, offsetof(sim_cost_params_t, host_sync)},
    {"reduction_buffer_bytes", S_U64, offsetof(sim_cost_params_t, reduction_buffer_bytes)},
    {"gateway_domain_gbs", S_U64, offsetof(sim_cost_params_t, gateway_domain_bandwidth)},
    {"gateway_ipu_gbs", S_U64, offsetof(sim_cost_params_t, gateway_ipu_bandwidth)},
    {"vector_efficiency", S_DOUBLE, offsetof(sim_cost_params_t, vector_efficiency)},
    {"exchange_efficiency", S_DOUBLE, offsetof(sim_cost_params_t, exchange_efficiency)},
    {"compute_set_overhead_ns", S_TIME, offsetof(sim_cost_params_t, compute_set_overhead)},
    {"tile_sync_ns", S_TIME, offsetof(sim_cost_params_t, tile_sync)},
    {"amp_k_group_f16", S_U32, offsetof(sim_cost_params_t, amp_k_group[SIM_PREC_F16])},
    {"amp_k_group_f32", S_U32, offsetof(sim_cost_params_t, amp_k_group[SIM_PREC_F32])},
    {"amp_n_group", S_U32, offsetof(sim_cost_params_t, amp_n_group)},
    {"vector_lanes_f16", S_U32, offsetof(sim_cost_params_t, vector_lanes[SIM_PREC_F16])},
    {"vector_lanes_f32", S_U32, offsetof(sim_cost_params_t, vector_lanes[SIM_PREC_F32])},
    {"code_bytes_per_tile", S_U64, offsetof(sim_cost_params_t, code_bytes_per_tile)},
    {"code_bytes_per_layer", S_U64, offsetof(sim_cost_params_t, code_bytes_per_layer)},
    {"host_servers", S_INT, offsetof(sim_cost_params_t, host_servers)},
    {"host_nic_gbs", S_U64, offsetof(sim_cost_params_t, host_nic_bandwidth)},
    {"gateway_gbs", S_U64, offsetof(sim_cost_params_t, gateway_bandwidth)},
    {"prefetch_depth", S_U32, offsetof(sim_cost_params_t, prefetch_depth)},
    {"streaming_gbs", S_U64, offsetof(sim_cost_params_t, streaming_bandwidth)},
};

static const struct field *find_field(const char *key)
{
    for (size_t i = 0; key && i < sizeof(fields) / sizeof(fields[0]); i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}

/* Whole units from thousandths, or -ERANGE when MILLI has a fraction or lies outside LO..HI. */
static int whole(uint64_t milli, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (milli % 1000 != 0 || milli / 1000 < lo || milli / 1000 > hi)
        return -ERANGE;
    *out = milli / 1000;
    return 0;
}

int sim_cost_param_set_milli(sim_cost_params_t *cp, const char *key, uint64_t milli)
{
    const struct field *f = find_field(key);
    const sim_param_info_t *info = sim_param_find(key);
    char *at;
    uint64_t v;

    if (f == NULL || info == NULL)
        return -ENOENT;
    at = (char *)cp + f->off;
    switch (f->slot) {
    case S_DOUBLE:
        if (milli < 1 || milli > 1000)
            return -ERANGE;
        *(double *)at = (double)milli / 1000.0;
        return 0;
    case S_TIME:
        *(sim_time_t *)at = milli; /* thousandths of a nanosecond are picoseconds */
        return 0;
    case S_INT:
        if (whole(milli, 0, 4096, &v) != 0)
            return -ERANGE;
        *(int *)at = (int)v;
        return 0;
    case S_U32:
        if (whole(milli, 1, 4096, &v) != 0)
            return -ERANGE;
        *(uint32_t *)at = (uint32_t)v;
        return 0;
    case S_U64:
        if (info->unit == SIM_UNIT_GBS) {
            if (milli < 1 || milli > 1000000000ULL)
                return -ERANGE;
            *(uint64_t *)at = milli * 1000000ULL;
            return 0;
        }
        if (whole(milli, 0, UINT64_C(1) << 40, &v) != 0)
            return -ERANGE;
        *(uint64_t *)at = v;
        return 0;
    }
    return -ENOENT;
}

double sim_cost_param_value(const sim_cost_params_t *cp, const char *key)
{
    const struct field *f = find_field(key);
    const sim_param_info_t *info = sim_param_find(key);
    const char *at;

    if (f == NULL || info == NULL)
        return -1;
    at = (const char *)cp + f->off;
    switch (f->slot) {
    case S_DOUBLE:
        return *(const double *)at;
    case S_TIME:
        return (double)*(const sim_time_t *)at / 1000.0;
    case S_INT:
        return *(const int *)at;
    case S_U32:
        return *(const uint32_t *)at;
    case S_U64:
        return info->unit == SIM_UNIT_GBS ? (double)*(const uint64_t *)at / 1e9
                                          : (double)*(const uint64_t *)at;
    }
    return -1;
}

const sim_device_t *sim_cost_params_device(const sim_cost_params_t *cp)
{
    return cp->ipu == 1 ? sim_device_bow() : sim_device_gc200();
}

int sim_cost_params_equal(const sim_cost_params_t *a, const sim_cost_params_t *b)
{
    if (a->ipu != b->ipu)
        return 0;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (sim_cost_param_value(a, fields[i].key) != sim_cost_param_value(b, fields[i].key))
            return 0;
    return 1;
}
