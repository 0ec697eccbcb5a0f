/*
 * Simulated time and memory: what every run would cost on a real pod.
 *
 * Each simulated IPU keeps a clock, charged by the cost model of sim/ (a GC200 device, IPU-Links
 * inside an IPU-Link domain, GW-Links between domains): collectives and point-to-point messages
 * charge link time and synchronisation, and a program charges its compute with
 * gcl_charge_compute. Simulated times are a pure function of the program and configuration:
 * bitwise the same from run to run, whatever the host's load.
 *
 * The pod is GCL_TOPOLOGY (or poprun --topology): a preset (M2000, POD16, POD64, POD128, POD256)
 * or a topology file; by default the smallest preset that holds the job's IPUs. Global IPU g of
 * the job is IPU g of the pod.
 *
 * GCL_SIM_REPORT=PATH writes a JSON report per instance at gcl_finalize (%i in PATH becomes the
 * instance index); GCL_SIM_TRACE=PATH writes a Chrome trace (open it in https://ui.perfetto.dev).
 */
#ifndef GCL_SIM_H
#define GCL_SIM_H

#include <stddef.h>
#include <stdio.h>

#include "gcl/gcl.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * Allocates BYTES of this IPU's simulated SRAM (about 900 MB on a GC200), backed by host memory
 * that *OUT points to (64-byte aligned). In phantom mode the pointer names an allocation that
 * holds no data: collectives given it move sizes only, and touching it faults. LABEL
 * names the allocation in reports. Returns GCL_OK, GCL_ERR_OUT_OF_MEMORY when the IPU's SRAM
 * would overflow (gcl_ctx_last_error then lists what is allocated on the IPU, largest first),
 * GCL_ERR_NO_HOST_MEMORY, or GCL_ERR_INVALID_ARGUMENT.
 */
gcl_status_t gcl_ipu_malloc(gcl_ctx_t ctx, size_t bytes, const char *label, void **out);
/* Frees memory from gcl_ipu_malloc on the same IPU (NULL is fine). */
void gcl_ipu_free(gcl_ctx_t ctx, void *ptr);

/*
 * Charges compute to this IPU's clock: FLOPS floating-point operations at the precision of TYPE
 * (f16/bf16 run at the f16 peak, everything else at the f32 peak) that move BYTES to and from
 * tile memory. The time is the roofline max(flops / peak, bytes / SRAM bandwidth). NAME labels
 * the slice in the trace. Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT.
 */
gcl_status_t gcl_charge_compute(gcl_ctx_t ctx, const char *name, double flops, double bytes,
                                gcl_dtype_t type);

/*
 * ---- The layer-level cost model ----
 *
 * A program that knows its layers charges each one, and the simulated IPU's clock advances by
 * what the layer costs on a GC200 (sim/cost/ipu_cost.h, sim/README.md): AMP time for matrix products
 * planned over 1472 tiles, vector and SRAM time for the rest, one tile sync and a vertex
 * overhead per compute set, and the on-chip exchange. The clock's compute, sync and exchange
 * shares grow by the respective parts. The constants come from the pod (GCL_TOPOLOGY: a preset,
 * a topology file, or a preset with overrides such as "POD16,amp_efficiency=0.5").
 */
typedef enum {
    GCL_LAYER_MATMUL = 0, /* rows x in by in x out (+ bias): a dense layer */
    GCL_LAYER_CONV,       /* 2-D convolution, h x w x c_in -> c_out, kernel x kernel, stride, pad */
    GCL_LAYER_ATTENTION,  /* scores and context of HEADS heads over SEQ tokens of HEAD_DIM */
    GCL_LAYER_ELEMENTWISE, /* VALUES values, OPS operations each, reading INPUTS tensors */
    GCL_LAYER_NORM,        /* batch or layer normalisation of VALUES values over CHANNELS */
    GCL_LAYER_POOL,        /* h x w x c_in, kernel x kernel, stride, pad */
    GCL_LAYER_EMBEDDING,   /* ROWS token lookups in an IN x OUT table */
    GCL_LAYER_LOSS,        /* softmax cross-entropy of ROWS predictions over OUT classes */
} gcl_layer_type_t;

typedef enum { GCL_PASS_FORWARD = 0, GCL_PASS_BACKWARD, GCL_PASS_RECOMPUTE } gcl_pass_t;

/* A layer's shape per unit (one sample, or one pack of samples). Fields a type does not read
 * stay 0. Initialise with GCL_LAYER_INIT. */
typedef struct {
    gcl_layer_type_t type;
    const char *name;   /* labels the trace slice (NULL: "TYPE PASS") */
    gcl_dtype_t dtype;  /* GCL_F16 and GCL_BF16 run the AMP at the f16 rate, GCL_F32 at f32 */
    long rows, in, out; /* matmul; embedding (tokens, vocabulary, width); loss (predictions,
                           classes in OUT) */
    long values;        /* elementwise, norm */
    int h, w, c_in, c_out, kernel, stride, pad; /* conv, pool (pool: channels in c_in) */
    int heads, seq, head_dim;                   /* attention */
    int channels;                               /* norm */
    int ops, inputs;                            /* elementwise */
    int bias;                                   /* matmul, conv: a bias vector */
    int no_input_grad; /* 1: the backward pass computes no input gradient (a first layer) */
} gcl_layer_t;

#define GCL_LAYER_INIT                                                                             \
    {                                                                                              \
        GCL_LAYER_MATMUL, NULL, GCL_F16, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0   \
    }

/*
 * Charges PASS of LAYER over UNITS units (the micro-batch: samples, or packs of a packed model)
 * to this IPU's clock. LAYER is read only. Returns GCL_OK, or GCL_ERR_INVALID_ARGUMENT for a NULL
 * argument, UNITS < 1, an unknown type or pass, or a shape the type cannot take (a missing
 * dimension, a kernel larger than the padded input, counts beyond 2^62); gcl_ctx_last_error()
 * then says which field.
 */
gcl_status_t gcl_charge_layer(gcl_ctx_t ctx, const gcl_layer_t *layer, gcl_pass_t pass, long units);

typedef enum {
    GCL_OPTIM_SGD = 0,
    GCL_OPTIM_MOMENTUM,
    GCL_OPTIM_ADAM,
    GCL_OPTIM_LAMB,
    GCL_OPTIM_LARS /* momentum scaled per tensor by a trust ratio (norms as LAMB's) */
} gcl_optim_t;

/* One weight update (optimizer step) of PARAMS parameters in TENSORS weight tensors. */
typedef struct {
    gcl_optim_t optimizer;
    double params;
    int tensors;
    gcl_dtype_t weight_type, grad_type; /* of the weights and of the gradient accumulator */
    int streaming; /* 1: the optimizer state lives in Streaming Memory (read and written) */
} gcl_update_t;

/* Charges update U (f32 state) to this IPU's clock. Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_charge_update(gcl_ctx_t ctx, const gcl_update_t *u);

/* What update U costs on INST's pod, in seconds: what gcl_charge_update charges. Returns GCL_OK
 * or GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_sim_update_time(gcl_instance_t inst, const gcl_update_t *u, double *seconds);

/*
 * The simulated time of one collective call over the pod's IPUS[0..N-1], every rank entering at
 * the same time: its group's synchronisation and the replay of the algorithm the automatic
 * choice picks for it (what a call over those IPUs charges when its ranks arrive together).
 * COLL is "all_reduce", "reduce_scatter" or "all_gather"; COUNT is the call's (elements per
 * rank for all_reduce, of one rank's block for the others). A planner's estimate; the call in a
 * run may differ a little (phantom runs charge the schedule step by step). Returns GCL_OK,
 * GCL_ERR_INVALID_ARGUMENT or GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_sim_collective_time(gcl_instance_t inst, const char *coll, size_t count,
                                     gcl_dtype_t type, const int *ipus, int n, double *seconds);

/*
 * The host data feed (sim/cost/feed.h). Stage 0 of a replica calls it before each micro-batch of
 * SAMPLES samples: the host servers (HOST_SERVERS, or the pod's default of one per 16 IPUs of
 * the job when 0) prepare SAMPLES_PER_S samples/s each, and each sample crosses the host's and
 * the IPU-M2000's RoCE NICs as BYTES_PER_SAMPLE bytes; the replica gets its share of the job's
 * rate. The first call on an IPU sets its stream up with these numbers; later calls use them.
 * The IPU waits until the micro-batch is ready, then copies its SAMPLES x BYTES_PER_SAMPLE bytes
 * from Streaming Memory at the pod's streaming_gbs; both are host time (host_wait_s).
 * Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT (a negative number, SAMPLES < 1);
 * GCL_ERR_NO_HOST_MEMORY.
 */
typedef struct {
    double samples_per_s;    /* per host server; 0: preprocessing never limits */
    double bytes_per_sample; /* host -> IPU; 0: the links never limit */
    int host_servers;        /* 0: the pod's default */
} gcl_sim_feed_t;

gcl_status_t gcl_sim_feed(gcl_ctx_t ctx, const gcl_sim_feed_t *feed, long samples);

/*
 * Charges this IPU for streaming BYTES to IPU position PEER of its replica over the pod's links:
 * ceil(BYTES / the route's bottleneck bandwidth), as exchange time (the route's latency is the
 * message's: send PEER a zero-count gcl_send_start after this charge, and its receive completes
 * one latency later). This is how a pipeline's activations and gradients are charged
 * deterministically whatever order the IPU threads run in. Returns GCL_OK or
 * GCL_ERR_INVALID_ARGUMENT (PEER out of range or this IPU).
 */
gcl_status_t gcl_charge_transfer(gcl_ctx_t ctx, int peer, size_t bytes);

/*
 * ---- Models and plans (what sim-step simulates) ----
 *
 * A model is built in ("resnet50", "bert-large") or read from a model file (format in
 * sim/README.md). A plan splits it over pipeline stages for a job (the balancing rule or the
 * user's split), says what each stage costs per micro-batch, sends to the next, and holds in
 * memory. Both are plain data: create them once, read them from every IPU thread.
 */
typedef struct gcl_sim_model *gcl_sim_model_t;

/* Opens MODEL; SEQUENCE_LENGTH is BERT's (128 or 512; ignored otherwise). On failure ERR (LEN
 * bytes) holds one line naming the file, line and layer type (and the supported types for an
 * unsupported one). Returns GCL_OK, GCL_ERR_INVALID_ARGUMENT or GCL_ERR_NO_HOST_MEMORY. */
gcl_status_t gcl_sim_model_open(const char *model, int sequence_length, gcl_sim_model_t *out,
                                char *err, size_t len);
/* As gcl_sim_model_open, with SEQUENCES_PER_PACK sequences (samples) in each unit of a packed
 * model: 1 to 64, a fraction allowed (1.5: three sequences in two packs); 0 for the model's own
 * (bert-large 1, a model file its samples_per_unit). */
gcl_status_t gcl_sim_model_open_packed(const char *model, int sequence_length,
                                       double sequences_per_pack, gcl_sim_model_t *out, char *err,
                                       size_t len);
void gcl_sim_model_free(gcl_sim_model_t m);

typedef struct {
    const char *name;
    int layers;
    double params;                                       /* tied weights counted once */
    double flops_per_sample;                             /* forward, 2 per multiply-add */
    double samples_per_unit;                             /* packing: samples per layer unit */
    double input_bytes;                                  /* per sample, host -> IPU */
    double host_samples_per_s;                           /* per host server */
    double dataset_samples;                              /* per epoch (0: unknown) */
    const char *optimizer, *recompute, *optimizer_state; /* the model's defaults */
    int attention_sublayers, ffn_sublayers; /* what a placement by sublayers counts (0: none) */
} gcl_sim_model_info_t;

void gcl_sim_model_info(gcl_sim_model_t m, gcl_sim_model_info_t *out);
/* Layer I (0-based) with pass-independent fields; its name stays valid while M lives. Returns
 * GCL_OK or GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_sim_model_layer(gcl_sim_model_t m, int i, gcl_layer_t *out);
/* The index of the layer called NAME, or -1. */
int gcl_sim_model_find(gcl_sim_model_t m, const char *name);
/* Writes M as a model file to F. Returns GCL_OK or GCL_ERR_SYSTEM. */
gcl_status_t gcl_sim_model_write(gcl_sim_model_t m, FILE *f);

typedef struct {
    int stages, replicas;
    long micro_batch;            /* samples; a multiple of samples_per_unit */
    int accumulation;            /* micro-batches per step */
    const char *schedule;        /* "popart", "gpipe" or "1f1b"; NULL: popart */
    const char *recompute;       /* "none", "checkpoints", "stage"; NULL: the model's */
    const char *optimizer;       /* "sgd", "momentum", "adam", "lamb", "lars"; NULL: the model's */
    const char *optimizer_state; /* "on-chip", "sharded" (replicated tensor sharding),
                                    "streaming" (off chip), "streaming-sharded"; NULL: the
                                    model's (sharding with one replica is none) */
    gcl_dtype_t grad_type;       /* GCL_F16 or GCL_F32 */
    const int *splits;           /* first layers of stages 1..stages-1; NULL: balancing rule */
    const char *placement;       /* "4/5,7/6,6/7,7/6": attention/feed-forward sublayers per IPU
                                    (IPU 0 also holds the embedding and the heads), or with
                                    LAYERS_PER_IPU set "3,7,7,7" (both counts equal); NULL:
                                    none. Needs the popart schedule and a model whose layers
                                    say their part. */
    int layers_per_ipu;          /* 1: PLACEMENT is the "3,7,7,7" form */
    int quiet;                   /* 1: a stage that does not fit is reported without the search
                                    for the smallest stage count that would (a planner's many
                                    plans stay cheap) */
} gcl_sim_plan_config_t;

typedef struct gcl_sim_plan *gcl_sim_plan_t;

/*
 * Plans M for the job on INST's simulated pod (its cost constants). Returns GCL_OK;
 * GCL_ERR_INVALID_ARGUMENT for a configuration that cannot be planned (ERR says why);
 * GCL_ERR_OUT_OF_MEMORY when a stage does not fit its IPU: ERR names the stage, the layer from
 * which it overflows, the bytes, and the smallest stage count that fits; the plan is still made
 * (*OUT is set) so its memory can be reported; GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_sim_plan_create(gcl_instance_t inst, gcl_sim_model_t m,
                                 const gcl_sim_plan_config_t *config, gcl_sim_plan_t *out,
                                 char *err, size_t len);
void gcl_sim_plan_free(gcl_sim_plan_t p);

typedef struct {
    const char *schedule, *recompute, *optimizer, *optimizer_state; /* as resolved */
    long units;                                                     /* units per micro-batch */
    double bubble; /* (K-1)/(A+K-1); popart: (2P-2)/(A+2P-2) */
    int fragments; /* forward pipeline stages P (the stages, and the heads' return to IPU 0
                      under a placement) */
    long cycles;   /* popart: A + 2P - 2 cycles per step; else 0 */
} gcl_sim_plan_info_t;
void gcl_sim_plan_info(gcl_sim_plan_t p, gcl_sim_plan_info_t *out);

typedef struct {
    int first_layer, last_layer; /* its first layer and one past its last */
    int layers;                  /* layers it holds (a placement's IPU: some of those between) */
    double weights;              /* values: what the stage's gradient reduction moves */
    double params;               /* values its optimizer updates (not tied weights) */
    int tensors;
    double out_values;                /* values per micro-batch to the next stage (0 on the last) */
    int in_flight;                    /* micro-batches held at once */
    double fwd_s, bwd_s, recompute_s; /* per micro-batch, from the cost model */
    double mem_weights, mem_gradients, mem_optimizer, mem_stash, mem_activations, mem_code;
    double mem_total, mem_capacity, mem_headroom; /* bytes; headroom < 0: does not fit */
} gcl_sim_stage_t;

/* Stage S of P. Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_sim_plan_stage(gcl_sim_plan_t p, int s, gcl_sim_stage_t *out);
/* Stage S's order of passes (2 x accumulation entries): PASS[i] is 'F' or 'B' of micro-batch
 * MICRO[i]. Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_sim_plan_order(gcl_sim_plan_t p, int s, char *pass, int *micro);
/* Charges PASS of every layer of stage S of P for one micro-batch (recompute: the forward
 * again), layer by layer, as gcl_charge_layer would. Returns what that returns. */
gcl_status_t gcl_sim_charge_stage(gcl_ctx_t ctx, gcl_sim_plan_t p, int s, gcl_pass_t pass);

/* Fragment F of P (a forward pipeline stage, 0 .. fragments-1): its IPU position, its passes
 * per micro-batch and the values it hands to fragment F+1. Returns GCL_OK or
 * GCL_ERR_INVALID_ARGUMENT. */
typedef struct {
    int stage;
    double fwd_s, bwd_s, recompute_s;
    double out_values;
} gcl_sim_fragment_t;
gcl_status_t gcl_sim_plan_fragment(gcl_sim_plan_t p, int f, gcl_sim_fragment_t *out);
/* Charges PASS of fragment F's layers, as gcl_sim_charge_stage does a stage's. */
gcl_status_t gcl_sim_charge_fragment(gcl_ctx_t ctx, gcl_sim_plan_t p, int f, gcl_pass_t pass);

/* Charges one synchronisation of the IPUs with the host (the pod's host_sync_ns: a round trip
 * through the gateway to the host server), as host time. sim-step charges it at the end of
 * every cycle of a PopART pipeline (each cycle's micro-batch and anchors go through the host,
 * and PopART's default sync pattern makes every IPU take part) and once per step of a single
 * stage (its micro-batches come prefetched from Streaming Memory: gcl_sim_feed). Returns GCL_OK
 * or GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_sim_host_exchange(gcl_ctx_t ctx);

/* Charges LOCAL synchronisations of IPUs inside one IPU-Link domain (sync_latency_ns each) and
 * SPANNING ones across domains (sync_latency_ns + gw_sync_latency_ns each), as sync time: the
 * per-step syncs of a program's collectives beyond the one a call charges. Returns GCL_OK or
 * GCL_ERR_INVALID_ARGUMENT (a negative count). */
gcl_status_t gcl_sim_charge_syncs(gcl_ctx_t ctx, long local, long spanning);

/* Charges BYTES of this IPU's domain's traffic to other domains at the rate a domain sends it
 * (gateway_domain_gbs), as exchange time: what every IPU of a domain waits for while the
 * domain's share of a reduction across domains leaves it. Returns GCL_OK or
 * GCL_ERR_INVALID_ARGUMENT. */
gcl_status_t gcl_sim_charge_uplink(gcl_ctx_t ctx, double bytes);

/* Time to train: ceil(SAMPLES / GLOBAL_BATCH) steps of STEP_S seconds, plus OVERHEAD_S. */
double gcl_sim_time_to_train(double step_s, long global_batch, double samples, double overhead_s);

/*
 * The cost model's constants (sim/device/params.h). Parameter I (0-based) of INST's pod: its key (a
 * topology-file key and an override), kind ("sourced", "assumed", "fitted"), unit, the pod's
 * current value, the believed range and its source. Returns 0, or -1 past the last.
 */
typedef struct {
    const char *key, *kind, *unit, *source;
    double value, lo, hi;
} gcl_sim_param_t;

int gcl_sim_param(gcl_instance_t inst, int i, gcl_sim_param_t *out);

/* This IPU's simulated clock, in seconds since the start of the job. */
double gcl_sim_time(gcl_ctx_t ctx);

typedef struct {
    double total_s;                                   /* the clock */
    double compute_s;                                 /* charged compute */
    double exchange_s;                                /* moving data over IPU-Links and GW-Links */
    double sync_s;                                    /* synchronisation */
    double idle_s;                                    /* waiting for peers */
    size_t memory_used, memory_peak, memory_capacity; /* simulated SRAM, bytes */
    double host_wait_s;                               /* waiting for the host feed (gcl_sim_feed) */
} gcl_sim_stats_t;

/* This IPU's simulated statistics so far. */
void gcl_sim_stats(gcl_ctx_t ctx, gcl_sim_stats_t *out);

/* The simulated pod's name ("POD16", or the file's name) and its number of IPUs. */
const char *gcl_sim_topology(gcl_instance_t inst);
int gcl_sim_topology_ipus(gcl_instance_t inst);
/* Its IPU-Link domains (ILDs: 1 for POD16 and POD64, 2 for POD128, 4 for POD256). */
int gcl_sim_topology_ilds(gcl_instance_t inst);
/* Its IPU: "GC200" or "Bow" (the topology key "ipu"; sim/README.md). */
const char *gcl_sim_device(gcl_instance_t inst);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* GCL_SIM_H */
