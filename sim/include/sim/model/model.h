/*
 * Models, the front: a model by name, built in ("resnet50", "bert-large": sim/model/model_builtin.h)
 * or read from a model file (sim/model/model_file.h), into the container of sim/model/model_def.h.
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stddef.h>

#include "sim/model/model_builtin.h"
#include "sim/model/model_def.h"
#include "sim/model/model_file.h"

/* NAME is "resnet50", "bert-large" or a file path. SEQ is BERT's sequence length; PER_PACK the
 * sequences (samples) in each unit of a packed model, 1 to 64 with a fraction allowed, or 0 for
 * the model's own (bert-large: 1; a file: its samples_per_unit). Errors as sim_model_load, plus
 * BERT's sequence length and PER_PACK. */
int sim_model_open(const char *name, int seq, double per_pack, sim_model_t *m, char *err,
                   size_t errlen);

#endif /* SIM_MODEL_H */
