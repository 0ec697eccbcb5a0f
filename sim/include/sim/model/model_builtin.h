/*
 * The built-in models, layer by layer (the counts are checked by tests/unit/sim):
 *   resnet50     ResNet-50 v1.5 at 224 x 224 (the stride-2 of each down-sampling bottleneck in
 *                its 3x3 convolution, as in the MLPerf reference): 25,557,032 parameters and
 *                4.09 G multiply-adds (8.2 GFLOP) per image forward. conv1 computes no input
 *                gradient. Checkpoints at every bottleneck's output. Momentum SGD, uint8 images
 *                from the host (150,528 bytes each), ImageNet's 1,281,167 training images.
 *   bert-large   BERT-Large pre-training: embeddings (word 30522, position 512, type 2), 24
 *                encoder layers of hidden 1024, 16 heads, FFN 4096, and both pre-training heads
 *                (pooler and next-sentence, and the masked-LM transform and decoder, whose
 *                weights are the word embedding's): 336,226,108 parameters. At sequence length
 *                128 one unit holds 128 tokens with 20 masked predictions, at 512 it holds
 *                512 with 76 (MLPerf's 15%); a unit is one sequence, or with packing (Graphcore's
 *                packed BERT) a pack of PER_PACK sequences on average, a fraction allowed.
 *                Checkpoints at every encoder layer's output. LAMB, its state off chip (in Streaming
 *                Memory, as Graphcore's IPU-POD16 runs had it). Every layer says its part
 *                (embedding, attention or feed-forward sublayer, head: sim/cost/layer.h), for
 *                placements by sublayer.
 */
#ifndef SIM_MODEL_BUILTIN_H
#define SIM_MODEL_BUILTIN_H

#include "sim/model/model_def.h"

/* The built-in models. SEQ is BERT's sequence length (128 or 512), PER_PACK its sequences per
 * unit (1 to 64). Return 0, -EINVAL or -ENOMEM. */
int sim_model_resnet50(sim_model_t *m);
int sim_model_bert_large(sim_model_t *m, int seq, double per_pack);

#endif /* SIM_MODEL_BUILTIN_H */
