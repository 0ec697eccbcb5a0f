/*
 * poprun's options: one table that drives command-line parsing, --help, and the configuration
 * files of --export-config / --import-config.
 *
 * Precedence: built-in defaults, then the file of --import-config, then the command line.
 */
#ifndef POPRUN_OPTIONS_H
#define POPRUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

struct poprun_options {
    int num_replicas;              /* --num-replicas (1) */
    int num_instances;             /* --num-instances (1) */
    int ipus_per_replica;          /* --ipus-per-replica (1) */
    char *host;                    /* -H/--host host list, or NULL */
    char *hostfile;                /* --hostfile, or NULL */
    int num_ilds;                  /* --num-ilds, 0 = as many as the IPUs need */
    char *mpi_global_args;         /* --mpi-global-args, or NULL */
    char *mpi_local_args;          /* --mpi-local-args, or NULL */
    bool numa_aware;               /* --numa-aware */
    bool print_topology;           /* --print-topology */
    int only_output_from_instance; /* --only-output-from-instance, -1 = all */
    bool offline_mode;             /* --offline-mode */
    char *export_config;           /* --export-config FILE, or NULL */
    char *import_config;           /* --import-config FILE, or NULL */
    char *topology;                /* --topology PRESET|FILE, or NULL = smallest preset */
    bool dry_run;                  /* --dry-run */
    int verbose;                   /* -v (1), -vv (2) */
    bool help;                     /* --help */
    bool version;                  /* --version */
    char *instance_token;          /* hidden --_instance TOKEN: run as the instance wrapper */
    struct strvec program;         /* the program and its arguments (program.v[0]) */
};

/* Sets every option to its default (and the program to none). */
void options_init(struct poprun_options *o);
/* Frees what OPTIONS owns and re-initialises it. */
void options_free(struct poprun_options *o);

/* Parses ARGV[1..ARGC-1]: options up to the first non-option word (or "--"), then the program
 * and its arguments. When --import-config is given, that file is applied first and the command
 * line overrides it; a program on the command line replaces the file's program and arguments.
 * Returns 0, or -1 with one line in ERR (unknown option, missing or malformed value, bad file). */
int options_parse(struct poprun_options *o, int argc, char *const argv[], char *err, size_t errlen);

/* Applies one option by its long NAME (without "--") and VALUE (NULL for a flag given without
 * one), as a config file does: only the options that config files carry (not help, version,
 * dry-run, import-config or export-config). Returns 0, or -1 with a reason in ERR. */
int options_set(struct poprun_options *o, const char *name, const char *value, char *err,
                size_t errlen);

/* Writes the help text (every option, its default and meaning) to F. */
void options_print_help(FILE *f);

/* Writes O as a configuration file that options_load_config reads back to the same options.
 * Returns 0, or -1 with a reason in ERR. */
int options_write_config(const struct poprun_options *o, FILE *f, char *err, size_t errlen);
int options_export_config(const struct poprun_options *o, const char *path, char *err,
                          size_t errlen);

/* Reads a configuration file into O: one "name = value" a line, names as the long options without
 * "--" (plus "program" and "args"), '#' comments. Returns 0, or -1 with "FILE:LINE: reason". */
int options_load_config(struct poprun_options *o, const char *path, char *err, size_t errlen);

/* For config.c: calls FN with the long name and value text of every option that config files
 * carry and that is set (strings) or meaningful (numbers, flags), in table order. Stops and
 * returns -1 when FN does. */
int options_table_visit(const struct poprun_options *o,
                        int (*fn)(void *ctx, const char *name, const char *value), void *ctx);

#endif /* POPRUN_OPTIONS_H */
