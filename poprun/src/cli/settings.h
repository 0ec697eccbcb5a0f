/*
 * What poprun was asked to do: every option's value, as the option table (options_table.h)
 * fills it from the command line (options.c) or a configuration file (config_file.c).
 */
#ifndef POPRUN_SETTINGS_H
#define POPRUN_SETTINGS_H

#include "common/util.h"

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
    int elastic;           /* --elastic (0/1): go on without a lost instance, take it back */
    int min_replicas;      /* --min-replicas M (0: not given): below it an elastic job stops */
    int verbose;           /* -v (1), -vv or --vv (2) */
    int vv;                /* --vv: raises verbose to at least 2 */
    int help;              /* --help */
    int help_markdown;     /* hidden --_help-markdown: the option table of the README */
    int version;           /* --version */
    char *version_format;  /* --version-format text|json, or NULL (text) */
    char *instance_token;  /* hidden --_instance TOKEN: run as the instance wrapper */
    char *elastic_slot;    /* hidden --_elastic-slot SLOT: the wrapper of a replacement */
    struct strvec program; /* the program and its arguments (program.v[0]) */
};

#endif /* POPRUN_SETTINGS_H */
