/*
 * The built-in models, layer by layer (sim/model/model.h).
 *
 * ResNet-50 v1.5 (He et al. 2016; the v1.5 variant of the MLPerf reference, with the stride-2 of
 * a down-sampling bottleneck in its 3x3 convolution):
 *   conv1 7x7/2 64, BN, ReLU, max-pool 3x3/2                       224 -> 112 -> 56
 *   4 stages of 3, 4, 6, 3 bottlenecks of width 64, 128, 256, 512 (output 4 x width):
 *     1x1 conv, BN, ReLU; 3x3 conv (stride 2 in the first block of stages 2-4), BN, ReLU;
 *     1x1 conv, BN; the first block also projects its input (1x1 conv with the stride, BN);
 *     residual add, ReLU (a recomputation checkpoint)
 *   global average pool, fully connected 2048 -> 1000, softmax cross-entropy.
 * Counts: 25,557,032 parameters (convolutions have no bias; BN has scale and shift), 4.09 G
 * multiply-adds per image.
 *
 * BERT-Large (Devlin et al. 2019), pre-training, per unit of S tokens:
 *   embedding: word 30522 x 1024, position 512 x 1024, type 2 x 1024, their sum, LayerNorm,
 *              dropout
 *   24 x encoder: QKV 1024 -> 3072, attention (16 heads of 64), output 1024 -> 1024, dropout and
 *              residual add, LayerNorm, FFN 1024 -> 4096, GELU, FFN 4096 -> 1024, dropout and
 *              residual add, LayerNorm (a checkpoint)
 *   heads:     pooler 1024 -> 1024 and tanh on each sequence's first token, next-sentence
 *              1024 -> 2 and its loss; masked-LM transform 1024 -> 1024, GELU, LayerNorm, and
 *              the decoder 1024 -> 30522 (tied to the word embedding; its bias counted) on the
 *              P masked positions, and its loss.
 * P = 20 masked predictions per unit at S = 128, 76 at S = 512 (15% of the tokens). A unit holds
 * one sequence, or with packing a pack of S tokens that holds PER_PACK sequences on average
 * (Graphcore's packed BERT holds up to 3): the pooler and next-sentence head then run on
 * ceil(PER_PACK) rows. Parameters: 336,226,108.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/model/model_builtin.h"

typedef struct {
    sim_model_t *m;
    int rc;
} builder_t;

/* Appends L unless an earlier append failed. */
static void commit(builder_t *b, const sim_layer_t *l)
{
    if (b->rc == 0)
        b->rc = sim_model_add(b->m, l);
}

static void conv(builder_t *b, const char *name, uint32_t hw, uint32_t cin, uint32_t cout,
                 uint32_t k, uint32_t stride)
{
    sim_layer_t l;

    sim_layer_init(&l, SIM_LAYER_CONV, name);
    l.h = l.w = hw;
    l.cin = cin;
    l.cout = cout;
    l.kernel = k;
    l.stride = stride;
    l.pad = k / 2;
    commit(b, &l);
}

static void vec(builder_t *b, sim_layer_type_t type, const char *name, uint64_t values,
                uint32_t ops, uint32_t inputs, uint32_t channels)
{
    sim_layer_t l;

    sim_layer_init(&l, type, name);
    l.values = values;
    l.ops = ops;
    l.inputs = inputs;
    l.channels = channels;
    commit(b, &l);
}

/* One bottleneck block at input size HW x HW x CIN, of width W and stride S. */
static void bottleneck(builder_t *b, const char *tag, uint32_t hw, uint32_t cin, uint32_t w,
                       uint32_t s)
{
    uint32_t out_hw = hw / s;
    uint64_t mid = (uint64_t)hw * hw * w, mid2 = (uint64_t)out_hw * out_hw * w;
    uint64_t out = (uint64_t)out_hw * out_hw * 4 * w;
    char n[SIM_LAYER_NAME_MAX];

#define NAME(suffix) (snprintf(n, sizeof(n), "%s_%s", tag, suffix), n)
    conv(b, NAME("conv1"), hw, cin, w, 1, 1);
    vec(b, SIM_LAYER_NORM, NAME("bn1"), mid, 1, 1, w);
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("relu1"), mid, 1, 1, 0);
    conv(b, NAME("conv2"), hw, w, w, 3, s);
    vec(b, SIM_LAYER_NORM, NAME("bn2"), mid2, 1, 1, w);
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("relu2"), mid2, 1, 1, 0);
    conv(b, NAME("conv3"), out_hw, w, 4 * w, 1, 1);
    vec(b, SIM_LAYER_NORM, NAME("bn3"), out, 1, 1, 4 * w);
    if (cin != 4 * w || s != 1) {
        conv(b, NAME("proj"), hw, cin, 4 * w, 1, s);
        vec(b, SIM_LAYER_NORM, NAME("proj_bn"), out, 1, 1, 4 * w);
    }
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("add"), out, 1, 2, 0);
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("relu3"), out, 1, 1, 0);
    if (b->rc == 0)
        b->m->layers[b->m->num_layers - 1].checkpoint = 1;
#undef NAME
}

static void resnet_head(builder_t *b)
{
    sim_layer_t l;

    sim_layer_init(&l, SIM_LAYER_POOL, "avgpool");
    l.h = l.w = 7;
    l.cin = 2048;
    l.kernel = 7;
    l.stride = 7;
    commit(b, &l);
    sim_layer_init(&l, SIM_LAYER_MATMUL, "fc");
    l.in = 2048;
    l.out = 1000;
    l.bias = 1;
    commit(b, &l);
    sim_layer_init(&l, SIM_LAYER_LOSS, "loss");
    l.out = 1000;
    commit(b, &l);
}

int sim_model_resnet50(sim_model_t *m)
{
    static const uint32_t blocks[4] = {3, 4, 6, 3}, widths[4] = {64, 128, 256, 512};
    builder_t b = {m, 0};
    sim_layer_t l;
    uint32_t hw = 56, cin = 64;

    sim_model_init(m, "resnet50");
    m->input_bytes = 224 * 224 * 3;
    m->host_samples_per_s = 40000;
    m->dataset_samples = 1281167;
    m->optimizer = SIM_OPTIM_MOMENTUM;
    m->recompute = SIM_RECOMPUTE_CHECKPOINTS;
    conv(&b, "conv1", 224, 3, 64, 7, 2);
    if (b.rc == 0)
        m->layers[0].input_grad = 0;
    vec(&b, SIM_LAYER_NORM, "bn1", 112 * 112 * 64, 1, 1, 64);
    vec(&b, SIM_LAYER_ELEMENTWISE, "relu1", 112 * 112 * 64, 1, 1, 0);
    sim_layer_init(&l, SIM_LAYER_POOL, "maxpool");
    l.h = l.w = 112;
    l.cin = 64;
    l.kernel = 3;
    l.stride = 2;
    l.pad = 1;
    commit(&b, &l);
    for (int s = 0; s < 4; s++) {
        for (uint32_t i = 0; i < blocks[s]; i++) {
            char tag[16];
            uint32_t stride = s > 0 && i == 0 ? 2 : 1;

            snprintf(tag, sizeof(tag), "s%d_b%u", s + 1, i + 1);
            bottleneck(&b, tag, hw, cin, widths[s], stride);
            hw /= stride;
            cin = 4 * widths[s];
        }
    }
    resnet_head(&b);
    if (b.rc != 0)
        sim_model_free(m);
    return b.rc;
}

static void dense(builder_t *b, const char *name, uint64_t rows, uint64_t in, uint64_t out)
{
    sim_layer_t l;

    sim_layer_init(&l, SIM_LAYER_MATMUL, name);
    l.rows = rows;
    l.in = in;
    l.out = out;
    l.bias = 1;
    commit(b, &l);
}

static void embedding(builder_t *b, const char *name, uint64_t tokens, uint64_t vocab)
{
    sim_layer_t l;

    sim_layer_init(&l, SIM_LAYER_EMBEDDING, name);
    l.rows = tokens;
    l.in = vocab;
    l.out = 1024;
    l.input_grad = 0;
    commit(b, &l);
}

/* Marks the layers from FIRST to the last one added as part PART. */
static void mark(builder_t *b, size_t first, sim_part_t part)
{
    for (size_t i = first; b->rc == 0 && i < b->m->num_layers; i++)
        b->m->layers[i].part = (uint8_t)part;
}

static void encoder(builder_t *b, int i, uint32_t s)
{
    uint64_t hs = 1024ULL * s;
    sim_layer_t l;
    char n[SIM_LAYER_NAME_MAX];
    size_t att = b->m->num_layers, ffn;

#define NAME(suffix) (snprintf(n, sizeof(n), "l%d_%s", i, suffix), n)
    dense(b, NAME("qkv"), s, 1024, 3072);
    sim_layer_init(&l, SIM_LAYER_ATTENTION, NAME("attention"));
    l.heads = 16;
    l.seq = s;
    l.head_dim = 64;
    commit(b, &l);
    dense(b, NAME("out"), s, 1024, 1024);
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("add1"), hs, 2, 2, 0);
    vec(b, SIM_LAYER_NORM, NAME("ln1"), hs, 1, 1, 1024);
    mark(b, att, SIM_PART_ATTENTION);
    ffn = b->m->num_layers;
    dense(b, NAME("ffn1"), s, 1024, 4096);
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("gelu"), 4 * hs, 8, 1, 0);
    dense(b, NAME("ffn2"), s, 4096, 1024);
    vec(b, SIM_LAYER_ELEMENTWISE, NAME("add2"), hs, 2, 2, 0);
    vec(b, SIM_LAYER_NORM, NAME("ln2"), hs, 1, 1, 1024);
    if (b->rc == 0)
        b->m->layers[b->m->num_layers - 1].checkpoint = 1;
    mark(b, ffn, SIM_PART_FFN);
#undef NAME
}

static void bert_heads(builder_t *b, uint32_t seqs, uint32_t preds)
{
    sim_layer_t l;
    size_t first = b->m->num_layers;

    dense(b, "pooler", seqs, 1024, 1024);
    vec(b, SIM_LAYER_ELEMENTWISE, "pooler_tanh", 1024ULL * seqs, 4, 1, 0);
    dense(b, "nsp", seqs, 1024, 2);
    sim_layer_init(&l, SIM_LAYER_LOSS, "nsp_loss");
    l.rows = seqs;
    l.out = 2;
    commit(b, &l);
    dense(b, "mlm_transform", preds, 1024, 1024);
    vec(b, SIM_LAYER_ELEMENTWISE, "mlm_gelu", 1024ULL * preds, 8, 1, 0);
    vec(b, SIM_LAYER_NORM, "mlm_ln", 1024ULL * preds, 1, 1, 1024);
    dense(b, "mlm_decoder", preds, 1024, 30522);
    if (b->rc == 0)
        b->m->layers[b->m->num_layers - 1].tied = 1;
    sim_layer_init(&l, SIM_LAYER_LOSS, "mlm_loss");
    l.rows = preds;
    l.out = 30522;
    commit(b, &l);
    mark(b, first, SIM_PART_HEAD);
}

int sim_model_bert_large(sim_model_t *m, int seq, double per_pack)
{
    builder_t b = {m, 0};
    uint32_t s = (uint32_t)seq, preds = seq == 512 ? 76 : 20;
    uint64_t hs = 1024ULL * s;

    if ((seq != 128 && seq != 512) || !(per_pack >= 1 && per_pack <= 64))
        return -EINVAL;
    sim_model_init(m, "bert-large");
    m->samples_per_unit = per_pack;
    /* Token ids, positions, segment ids and the mask, 4 bytes each per token of a unit. */
    m->input_bytes = (uint64_t)(16.0 * s / per_pack + 0.5);
    m->host_samples_per_s = 500000;
    m->optimizer = SIM_OPTIM_LAMB;
    m->state = SIM_STATE_STREAMING; /* off chip, as Graphcore's IPU-POD16 BERT-Large */
    m->recompute = SIM_RECOMPUTE_CHECKPOINTS;
    embedding(&b, "word_embedding", s, 30522);
    embedding(&b, "position_embedding", s, 512);
    embedding(&b, "type_embedding", s, 2);
    vec(&b, SIM_LAYER_ELEMENTWISE, "embedding_sum", hs, 2, 3, 0);
    vec(&b, SIM_LAYER_NORM, "embedding_ln", hs, 1, 1, 1024);
    vec(&b, SIM_LAYER_ELEMENTWISE, "embedding_dropout", hs, 2, 1, 0);
    mark(&b, 0, SIM_PART_EMBEDDING);
    for (int i = 0; i < 24; i++)
        encoder(&b, i, s);
    bert_heads(&b, (uint32_t)ceil(per_pack - 1e-9), preds);
    if (b.rc != 0)
        sim_model_free(m);
    return b.rc;
}
