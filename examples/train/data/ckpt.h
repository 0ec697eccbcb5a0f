/*
 * Checkpoints: the complete training state (step, weights, optimizer state) in one file, laid
 * out by layer so that it does not depend on the number of replicas or pipeline stages.
 *
 *   offset 0    "GCLTRAIN", u32 version, u32 header bytes (CKPT_HEADER_BYTES)
 *   offset 16   the header fields of ckpt_meta_t, little-endian, zero-padded (the model's input
 *               image and its layers' kinds and windows come last: a file written before
 *               train had convolutions holds zeros there, which read as its MLP)
 *   header end  (1 + nstate) x nparams f32: the parameters, then each optimizer state vector
 *   last 4      CRC-32 (zlib's) of every byte before it
 *
 * A file is written to a temporary name in the same directory, fsync'd, renamed over its final
 * name (atomic on POSIX file systems), and the directory fsync'd, with mode 0600: a reader sees
 * the old file or the whole new one, never a part, even when the writer is killed at any moment.
 * Corruption after the fact (a flipped bit, a truncated copy) fails the size or CRC check.
 */
#ifndef TRAIN_CKPT_H
#define TRAIN_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

#define CKPT_VERSION      1
#define CKPT_HEADER_BYTES 512
/* Bounds a header must keep to: a layer's width, and the parameter count (2^34 f32 is 64 GiB). */
#define CKPT_MAX_DIM    (1u << 24)
#define CKPT_MAX_PARAMS ((uint64_t)1 << 34)

/* What a checkpoint records besides the numbers. The fields under "fingerprint" decide the
 * trajectory of training: a checkpoint can only be resumed by a run that agrees on them. */
typedef struct {
    uint64_t step; /* steps completed */
    uint64_t nparams;
    uint32_t nstate; /* optimizer state vectors */
    /* fingerprint */
    uint32_t nlayers;
    uint32_t dims[MODEL_MAX_LAYERS + 1];
    uint32_t optimizer, lr_schedule, grad_dtype;
    double lr, momentum, beta1, beta2, eps, weight_decay, grad_scale;
    uint64_t warmup_steps, seed, global_batch, train_samples;
    uint64_t schedule_steps; /* the length of the learning-rate schedule */
    /* the layout that wrote it (informative: any layout may resume it) */
    uint32_t replicas, stages, micro_batch, accumulation;
    /* fingerprint, continued: the input image (0 x 0 x 0: dims[0] values as they lie) and each
     * layer's kind (model.h's layer_kind_t), kernel, stride and padding */
    uint32_t in_c, in_h, in_w;
    uint32_t augment; /* --augment flip (0 in older files: none) */
    uint16_t kind[MODEL_MAX_LAYERS], kernel[MODEL_MAX_LAYERS], stride[MODEL_MAX_LAYERS],
        pad[MODEL_MAX_LAYERS];
} ckpt_meta_t;

typedef struct {
    ckpt_meta_t meta;
    float *data; /* (1 + nstate) x nparams */
} ckpt_t;

/* Records SHAPE in META's model fields (nlayers, dims and the layers' kinds and windows). */
void ckpt_set_model(ckpt_meta_t *meta, const model_shape_t *shape);
/* The model META describes. Returns 0, or -1 with ERR when its fields do not make one. */
int ckpt_model(const ckpt_meta_t *meta, model_shape_t *shape, char *err, size_t errlen);

/* Bytes of a file holding META. */
uint64_t ckpt_file_bytes(const ckpt_meta_t *meta);
/* DIR/ckpt-<step, 10 digits>.gclt: names sort by step. */
void ckpt_path(const char *dir, uint64_t step, char *buf, size_t len);

/* Writes META and DATA ((1 + nstate) x nparams floats) to PATH atomically, as above. Returns 0,
 * or -1 with ERR set and errno saying why (ENOSPC for a full disk); then no new file is left at
 * PATH or at the temporary name, and a checkpoint that was at PATH is still there. */
int ckpt_write(const char *path, const ckpt_meta_t *meta, const float *data, char *err,
               size_t errlen);
/* Reads and verifies PATH. Returns 0, or -1 with ERR saying what is wrong. */
int ckpt_read(const char *path, ckpt_t *out, char *err, size_t errlen);
void ckpt_free(ckpt_t *c);

/* 1 when A and B hold the same model (its layers and their shapes), else 0. */
int ckpt_same_model(const ckpt_meta_t *a, const ckpt_meta_t *b);

/* Whether a run with NOW may resume the checkpoint META. Returns 0, or -1 with ERR naming the
 * first field that differs. */
int ckpt_compatible(const ckpt_meta_t *meta, const ckpt_meta_t *now, char *err, size_t errlen);

/*
 * Finds the newest checkpoint of DIR that reads back whole and verifies, calling WARN(ctx, text)
 * for each newer one it skips as corrupt. Returns 1 with *OUT loaded, 0 when there is none, or
 * -1 with ERR set when DIR cannot be read.
 */
int ckpt_find_latest(const char *dir, ckpt_t *out, void (*warn)(void *ctx, const char *text),
                     void *ctx, char *err, size_t errlen);
/* Removes all but the newest KEEP checkpoints of DIR, and temporary files left by a writer that
 * was killed. Returns the number removed. */
int ckpt_prune(const char *dir, int keep);
/* Creates DIR (mode 0700) unless it exists. Returns 0, or -1 with ERR set. */
int ckpt_make_dir(const char *dir, char *err, size_t errlen);

/* Fault injection for the tests: the writer raises SIGKILL on itself at this point of its next
 * write (halfway through the data, or with the file complete but not yet renamed). */
typedef enum { CKPT_FAULT_NONE = 0, CKPT_FAULT_MID_WRITE, CKPT_FAULT_BEFORE_RENAME } ckpt_fault_t;
void ckpt_set_fault(ckpt_fault_t fault);

#endif
