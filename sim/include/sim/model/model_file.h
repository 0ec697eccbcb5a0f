/*
 * Model files: any model as a list of layers, read and written (the format is in sim/README.md,
 * "Model files", and at the top of sim/src/model/model_file.c).
 */
#ifndef SIM_MODEL_FILE_H
#define SIM_MODEL_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "sim/model/model_def.h"

/* Reads a model file. Returns 0, or -EINVAL / -ENOENT / -ENOMEM with one line in ERR: the file,
 * the line, the layer type and, for a type the model does not know, the supported types. */
int sim_model_load(const char *path, sim_model_t *m, char *err, size_t errlen);

/* Writes M as a model file that sim_model_load reads back to the same model. Returns 0 or -EIO. */
int sim_model_write(const sim_model_t *m, FILE *f);

#endif /* SIM_MODEL_FILE_H */
