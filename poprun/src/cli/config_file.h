/*
 * --export-config and --import-config: the options as a text file (config_file.c).
 */
#ifndef POPRUN_CONFIG_FILE_H
#define POPRUN_CONFIG_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "cli/settings.h"

/* Writes O as a configuration file that options_load_config reads back to the same options.
 * Returns 0, or -1 with a reason in ERR. */
int options_write_config(const struct poprun_options *o, FILE *f, char *err, size_t errlen);
int options_export_config(const struct poprun_options *o, const char *path, char *err,
                          size_t errlen);

/* Reads a configuration file into O: one "name = value" a line, names as the long options without
 * "--" (plus "program" and "args"), '#' comments. Returns 0, or -1 with "FILE:LINE: reason". */
int options_load_config(struct poprun_options *o, const char *path, char *err, size_t errlen);

#endif /* POPRUN_CONFIG_FILE_H */
