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
    char *mpi_global_args;         /* every --mpi-global-args, joined by spaces, or NULL */
    char *mpi_local_args;          /* every --mpi-local-args, joined by spaces, or NULL */
    char *export_env;              /* every -x NAME[=VALUE], quoted and joined, or NULL */
    int numa_aware;                /* --numa-aware (0/1): --process-placement spreadnuma */
    char *process_placement;       /* --process-placement spreadnuma|disabled, or NULL */
    int print_topology;            /* --print-topology (0/1) */
    int only_output_from_instance; /* --only-output-from-instance, -1 = all */
    int offline_mode;              /* --offline-mode (0/1) */
    int allow_run_as_root;         /* --allow-run-as-root: -1 = when root, 0, 1 */
    char *executable_cache_path;   /* --executable-cache-path DIR, or NULL */
    char *host_subnet;             /* --host-subnet CIDR|IFACE, or NULL */
    /* V-IPU and host set-up options: checked, reported as having no effect here. */
    char *vipu_server_host, *vipu_partition, *vipu_cluster, *vipu_allocation;
    int vipu_server_port, vipu_server_timeout;                 /* 0 = not given */
    int update_partition, reset_partition, remove_partition;   /* -1 = not given */
    int sync_python_venv, sync_poplar_sdk, distribute_ssh_key; /* -1 = not given */
    char *export_config;                                       /* --export-config FILE, or NULL */
    char *import_config;                                       /* --import-config FILE, or NULL */
    char *topology;        /* --topology PRESET|FILE, or NULL = smallest preset */
    int dry_run;           /* --dry-run */
    int graceful_timeout;  /* --graceful-timeout S (30): SIGTERM/SIGINT to SIGKILL */
    int max_restarts;      /* --max-restarts N (0): restarts after a failure */
    int verbose;           /* -v (1), -vv or --vv (2) */
    int vv;                /* --vv: raises verbose to at least 2 */
    int help;              /* --help */
    int help_markdown;     /* hidden --_help-markdown: the option table of the README */
    int version;           /* --version */
    char *version_format;  /* --version-format text|json, or NULL (text) */
    char *instance_token;  /* hidden --_instance TOKEN: run as the instance wrapper */
    struct strvec program; /* the program and its arguments (program.v[0]) */
};

/* Whether the instances are bound to NUMA nodes (--process-placement spreadnuma, or
 * --numa-aware). */
int options_spread_numa(const struct poprun_options *o);

/* Reports once, on F, each option given that has no effect here (the V-IPU options and the
 * host set-up options): "poprun: --vipu-partition has no effect on simulated IPUs". */
void options_report_no_effect(const struct poprun_options *o, FILE *f);

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

/* Writes the help text (every option, its default, PopRun's meaning and ours) to F. */
void options_print_help(FILE *f);
/* Writes the options as the Markdown table of poprun/README.md to F. */
void options_print_markdown(FILE *f);

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
