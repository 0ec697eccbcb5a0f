/*
 * Models, the front: a model by name, built in ("resnet50", "bert-large": sim/model_builtin.h)
 * or read from a model file (sim/model_file.h), into the container of sim/model_def.h.
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stddef.h>

#include "sim/model_builtin.h"
#include "sim/model_def.h"
#include "sim/model_file.h"

/* NAME is "resnet50", "bert-large" or a file path. Errors as sim_model_load, plus BERT's
 * sequence length. */
int sim_model_open(const char *name, int seq, sim_model_t *m, char *err, size_t errlen);

#endif /* SIM_MODEL_H */
