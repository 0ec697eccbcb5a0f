/*
 * The table of poprun's options and the checks of each kind of value; see options_table.h.
 *
 * Every option of Graphcore's PopRun is accepted in each of its forms (--opt value, --opt=value;
 * booleans as 1/0, yes/no, on/off, true/false in any case). Each entry says what the option means
 * to PopRun and what it does here; the V-IPU and host set-up options (F_NOEFFECT) are checked for
 * a well-formed value and reported once as having no effect, since there is no V-IPU server or
 * partition to manage for simulated IPUs.
 */
#include "cli/options_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/words.h"

/* Largest count accepted for replicas, instances and IPUs, so that products stay in an int. */
#define OPT_INT_MAX 1048576
/* Longest V-IPU name or host name accepted. */
#define OPT_NAME_MAX 255

#define OFF(field) offsetof(struct poprun_options, field)

/* The V-IPU server: PopRun asks it for a partition of IPUs; the simulated pod needs none. */
#define VIPU "Ignored: simulated IPUs need no V-IPU server or partition (reported once)."

const struct opt_def opt_table[] = {
    {"num-replicas", 0, K_POSINT, OFF(num_replicas), F_CONFIG, "N", "1", NULL,
     "Number of replicas of the model in the job.",
     "The same: replicas of --ipus-per-replica simulated IPUs each."},
    {"num-instances", 0, K_POSINT, OFF(num_instances), F_CONFIG, "N", "1", NULL,
     "Number of instances (host processes) the replicas are divided among.",
     "The same: each instance (an MPI rank) hosts an equal, contiguous block of replicas."},
    {"ipus-per-replica", 0, K_POSINT, OFF(ipus_per_replica), F_CONFIG, "N", "1", NULL,
     "IPUs each replica uses.", "Simulated IPUs per replica (pipeline stages)."},
    {"host", 'H', K_STRING, OFF(host), F_CONFIG, "HOSTS", "this host only", NULL,
     "Hosts to run the instances on, comma-separated.",
     "The same, also as h[0-2,4]; instances are divided evenly among them, in order."},
    {"hostfile", 0, K_PATH, OFF(hostfile), F_CONFIG, "FILE", "none", NULL, NULL,
     "Read the hosts from FILE, one a line ('#' comments; words after the first are ignored)."},
    {"num-ilds", 0, K_POSINT, OFF(num_ilds), F_CONFIG, "N", "as many as the IPUs need", NULL,
     "Number of IPU-Link domains the job spans.",
     "The same, in the simulated pod; replicas and instances are divided evenly among them."},
    {"mpi-global-args", 0, K_APPEND, OFF(mpi_global_args), F_CONFIG, "ARGS", "none", NULL,
     "Extra global options for mpirun.",
     "The same; split into words by shell-like quoting (no expansion); repeats add up."},
    {"mpi-local-args", 0, K_APPEND, OFF(mpi_local_args), F_CONFIG, "ARGS", "none", NULL,
     "Extra options of mpirun's application context, such as -x VAR.",
     "The same, placed before the program; repeats add up."},
    {"export", 'x', K_ENV, OFF(export_env), F_CONFIG, "NAME[=VALUE]", "none", NULL, NULL,
     "Export NAME (with VALUE, or as set here) to every instance on every host (mpirun's -x); "
     "repeats add up."},
    {"numa-aware", 0, K_BOOL, OFF(numa_aware), F_CONFIG, "[BOOL]", "off", NULL,
     "Bind each instance to NUMA nodes of its host (superseded by --process-placement).",
     "The same as --process-placement spreadnuma (hwloc)."},
    {"process-placement", 0, K_CHOICE, OFF(process_placement), F_CONFIG, "POLICY",
     "spreadcores where the hosts' cores are the job's own", "spreadnuma|spreadcores|disabled",
     "How instances are bound to their host: spreadnuma divides the host's NUMA nodes among its "
     "instances (PopRun's default); disabled binds nothing.",
     "The same, with hwloc, and spreadcores (ours) divides the host's cores among its instances. "
     "By default: spreadcores on this host alone, on distinct hosts and on a Slurm allocation's "
     "nodes; nothing on hosts that are network namespaces of this machine (they share its cores; "
     "said once), nor when --mpi-global-args binds (--bind-to, --cpu-set)."},
    {"print-topology", 0, K_BOOL, OFF(print_topology), F_CONFIG, "[BOOL]", "off", NULL,
     "Print the topology of the job before it runs.",
     "Print the table of hosts, IPU-Link domains, instances, replicas and IPUs, then run."},
    {"only-output-from-instance", 0, K_NONNEG, OFF(only_output_from_instance), F_CONFIG, "N", "all",
     NULL, "Show the output of one instance only.", NULL},
    {"offline-mode", 0, K_BOOL, OFF(offline_mode), F_CONFIG, "[BOOL]", "off", NULL,
     "Run without IPUs or a V-IPU server (compile only).",
     "Phantom buffers: sizes but no payload, simulated time only (GCL_SIM_PHANTOM=1)."},
    {"allow-run-as-root", 0, K_BOOL, OFF(allow_run_as_root), F_CONFIG, "[BOOL]", "when root", NULL,
     "Allow running as root (passed on to mpirun).",
     "The same (as root, poprun allows it unless told =no, and then refuses to run)."},
    {"executable-cache-path", 0, K_PATH, OFF(executable_cache_path), F_CONFIG, "DIR", "none", NULL,
     "Directory where compiled executables are cached and shared between runs.",
     "Created on every host if missing; each instance gets its absolute path in "
     "POPDIST_EXECUTABLE_CACHE_PATH, a place to keep its state."},
    {"host-subnet", 0, K_SUBNET, OFF(host_subnet), F_CONFIG, "CIDR|IFACE", "any", NULL,
     "Subnet of the network the hosts talk over.",
     "mpirun's tcp traffic (btl_tcp_if_include and oob_tcp_if_include, unless "
     "--mpi-global-args sets them) stays on it, and the tcp and ofi transports use the interface "
     "of each host that is on it (GCL_TCP_IFACE, GCL_OFI_IFACE)."},
    {"vipu-server-host", 0, K_HOST, OFF(vipu_server_host), F_CONFIG | F_NOEFFECT, "HOST", "none",
     NULL, "Host of the V-IPU server that manages the IPUs.", VIPU},
    {"vipu-server-port", 0, K_PORT, OFF(vipu_server_port), F_CONFIG | F_NOEFFECT, "PORT", "8090",
     NULL, "Port of the V-IPU server.", VIPU},
    {"vipu-server-timeout", 0, K_SECONDS, OFF(vipu_server_timeout), F_CONFIG | F_NOEFFECT,
     "SECONDS", "none", NULL, "How long to wait for the V-IPU server.", VIPU},
    {"vipu-partition", 0, K_NAME, OFF(vipu_partition), F_CONFIG | F_NOEFFECT, "NAME", "none", NULL,
     "The V-IPU partition to run on (created when missing).", VIPU},
    {"vipu-cluster", 0, K_NAME, OFF(vipu_cluster), F_CONFIG | F_NOEFFECT, "NAME", "none", NULL,
     "The V-IPU cluster to create the partition in.", VIPU},
    {"vipu-allocation", 0, K_NAME, OFF(vipu_allocation), F_CONFIG | F_NOEFFECT, "NAME", "none",
     NULL, "The V-IPU allocation to create the partition in (the later name of a cluster).", VIPU},
    {"update-partition", 0, K_BOOL, OFF(update_partition), F_CONFIG | F_NOEFFECT, "[BOOL]", "no",
     NULL, "Change an existing partition to fit the job.", VIPU},
    {"reset-partition", 0, K_BOOL, OFF(reset_partition), F_CONFIG | F_NOEFFECT, "[BOOL]", "yes",
     NULL, "Reset the partition's IPUs before the job.", VIPU},
    {"remove-partition", 0, K_BOOL, OFF(remove_partition), F_CONFIG | F_NOEFFECT, "[BOOL]", "yes",
     NULL, "Remove a partition poprun created once the job ends.", VIPU},
    {"synchronise-python-venv", 0, K_BOOL, OFF(sync_python_venv), F_CONFIG | F_NOEFFECT, "[BOOL]",
     "no", NULL, "Copy the Python virtual environment to the other hosts.",
     "Ignored: copy files to the hosts yourself (reported once)."},
    {"synchronise-poplar-sdk", 0, K_BOOL, OFF(sync_poplar_sdk), F_CONFIG | F_NOEFFECT, "[BOOL]",
     "no", NULL, "Copy the Poplar SDK to the other hosts.",
     "Ignored: there is no SDK to copy (reported once)."},
    {"distribute-ssh-key", 0, K_BOOL, OFF(distribute_ssh_key), F_CONFIG | F_NOEFFECT, "[BOOL]",
     "no", NULL, "Install an ssh key on the other hosts.",
     "Ignored: set up ssh (or mpirun's rsh agent) yourself (reported once)."},
    {"topology", 0, K_STRING, OFF(topology), F_CONFIG, "PRESET|FILE", "smallest that fits", NULL,
     NULL, "Simulated pod: M2000, POD16, POD64, POD128, POD256, or a topology file."},
    {"export-config", 0, K_PATH, OFF(export_config), 0, "FILE", "none", NULL, NULL,
     "Write the options (and program) to FILE, then go on (add --dry-run to stop there)."},
    {"import-config", 0, K_PATH, OFF(import_config), 0, "FILE", "none", NULL, NULL,
     "Read options from FILE; options on the command line override it."},
    {"dry-run", 0, K_BOOL, OFF(dry_run), 0, "[BOOL]", "off", NULL, NULL,
     "Print the plan and the mpirun command line; run nothing."},
    {"graceful-timeout", 0, K_NONNEG, OFF(graceful_timeout), F_CONFIG, "S", "30", NULL, NULL,
     "On SIGTERM or SIGINT, give every instance S seconds to stop by itself, then kill it."},
    {"max-restarts", 0, K_NONNEG, OFF(max_restarts), F_CONFIG, "N", "0", NULL, NULL,
     "Restart the whole job up to N times after an instance fails or a host is lost; with "
     "--elastic, start up to N replacements of lost instances instead, which join the running "
     "job."},
    {"elastic", 0, K_BOOL, OFF(elastic), F_CONFIG, "[BOOL]", "off", NULL, NULL,
     "Elastic training: when an instance is lost the others go on with fewer replicas, from "
     "memory, without a restart; a replacement (--max-restarts) joins back. Needs "
     "--min-replicas."},
    {"min-replicas", 0, K_POSINT, OFF(min_replicas), F_CONFIG, "M", "none", NULL, NULL,
     "With --elastic: the job stops, naming the instances lost, when fewer than M replicas are "
     "left."},
    {"verbose", 'v', K_COUNT, OFF(verbose), F_CONFIG, NULL, "0", NULL, "More output (-v, -vv).",
     "-v: print the plan and the mpirun command; -vv: also each instance's POPDIST_* "
     "variables."},
    {"vv", 0, K_BOOL, OFF(vv), F_CONFIG, "[BOOL]", "off", NULL, "Very verbose output.",
     "The same as -vv."},
    {"help", 'h', K_BOOL, OFF(help), 0, NULL, NULL, NULL, "Print the help and exit.",
     "Print this help (PopRun's meaning of each option, then ours) and exit."},
    {"version", 0, K_BOOL, OFF(version), 0, NULL, NULL, NULL, "Print the version and exit.", NULL},
    {"version-format", 0, K_CHOICE, OFF(version_format), 0, "FORMAT", "text", "text|json",
     "Format of --version: text or json.", NULL},
    {"_help-markdown", 0, K_BOOL, OFF(help_markdown), F_HIDDEN, NULL, NULL, NULL, NULL,
     "Internal: print the option table of poprun/README.md."},
    {"_instance", 0, K_STRING, OFF(instance_token), F_HIDDEN, "TOKEN", NULL, NULL, NULL,
     "Internal: run as the wrapper of one instance (started by mpirun)."},
    {"_elastic-slot", 0, K_STRING, OFF(elastic_slot), F_HIDDEN, "SLOT", NULL, NULL, NULL,
     "Internal: the wrapper of the replacement of instance SLOT of an elastic job."},
};

const size_t opt_count = sizeof(opt_table) / sizeof(opt_table[0]);

int opt_takes_value(const struct opt_def *d)
{
    return d->kind != K_BOOL && d->kind != K_COUNT;
}

int opt_parse_bool(const char *v)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return 1;
        if (strcasecmp(v, no[i]) == 0)
            return 0;
    }
    return -1;
}

static int set_int(const struct opt_def *d, const char *v, int min, int max, int *field, char *err,
                   size_t errlen)
{
    size_t len = strlen(v);
    bool digits = len > 0 && strspn(v, "0123456789") == len;
    int n;
    if (digits && parse_int_range(v, min, max, &n) == 0) {
        *field = n;
        return 0;
    }
    if (digits && strspn(v, "0") != len && max == OPT_INT_MAX)
        return errf(err, errlen, "--%s %s is too large (at most %d)", d->name, v, max);
    if (d->kind == K_PORT)
        return errf(err, errlen, "--%s must be a port from 1 to 65535, not '%s'", d->name, v);
    if (d->kind == K_SECONDS)
        return errf(err, errlen, "--%s must be a positive number of seconds, not '%s'", d->name, v);
    return errf(err, errlen, "--%s must be %s integer, not '%s'", d->name,
                min > 0 ? "a positive" : "a non-negative", v);
}

/* Whether every character of V is in SET and V has 1 to MAX of them. */
static bool made_of(const char *v, const char *set, size_t max)
{
    size_t len = strlen(v);
    return len > 0 && len <= max && strspn(v, set) == len;
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/* An IPv4 subnet "a.b.c.d/n". */
static bool is_cidr(const char *v)
{
    unsigned a, b, c, d, n;
    char tail;
    return sscanf(v, "%3u.%3u.%3u.%3u/%2u%c", &a, &b, &c, &d, &n, &tail) == 5 && a < 256 &&
           b < 256 && c < 256 && d < 256 && n <= 32 && strspn(v, "0123456789./") == strlen(v);
}

/* Checks VALUE against the kind of D that is a word of some shape. */
static int check_word(const struct opt_def *d, const char *v, char *err, size_t errlen)
{
    switch (d->kind) {
    case K_NAME:
        if (made_of(v, ALNUM "._-", OPT_NAME_MAX))
            return 0;
        return errf(err, errlen,
                    "--%s must be a name of letters, digits, '.', '_' and '-', not '%s'", d->name,
                    v);
    case K_HOST:
        if (made_of(v, ALNUM ".-:_[]", OPT_NAME_MAX) && v[0] != '-')
            return 0;
        return errf(err, errlen, "--%s must be a host name or an IP address, not '%s'", d->name, v);
    case K_SUBNET:
        if (is_cidr(v) || (made_of(v, ALNUM "._-:", 15) && v[0] != '-' && strchr(v, '/') == NULL))
            return 0;
        return errf(err, errlen,
                    "--%s must be a subnet such as 10.5.0.0/16 or an interface name, not '%s'",
                    d->name, v);
    case K_PATH:
        if (v[0] != '\0')
            return 0;
        return errf(err, errlen, "--%s needs a non-empty path", d->name);
    default:
        return 0;
    }
}

static int check_choice(const struct opt_def *d, const char *v, char *err, size_t errlen)
{
    size_t n = strlen(v);
    for (const char *c = d->choices; *c;) {
        size_t len = strcspn(c, "|");
        if (len == n && strncmp(c, v, n) == 0)
            return 0;
        c += len + (c[len] ? 1 : 0);
    }
    char list[128];
    snprintf(list, sizeof(list), "%s", d->choices);
    for (char *p = list; *p; p++)
        if (*p == '|')
            *p = ',';
    return errf(err, errlen, "--%s takes one of %s, not '%s'", d->name, list, v);
}

/* Appends WORD to the string field *FIELD, separated by a space. */
static void append(char **field, const char *word)
{
    char *next = *field ? xasprintf("%s %s", *field, word) : xstrdup(word);
    free(*field);
    *field = next;
}

static int add_env(const struct opt_def *d, const char *v, char **field, char *err, size_t errlen)
{
    size_t name = strcspn(v, "=");
    if (name == 0 || strspn(v, ALNUM "_") < name || (v[0] >= '0' && v[0] <= '9'))
        return errf(err, errlen,
                    "-%c takes NAME or NAME=VALUE (NAME of letters, digits and '_'), "
                    "not '%s'",
                    d->short_name, v);
    char *q = words_quote(v);
    append(field, q);
    free(q);
    return 0;
}

static int add_words(const struct opt_def *d, const char *v, char **field, char *err, size_t errlen)
{
    struct strvec words = STRVEC_INIT;
    char e[128];
    int rc = words_split(v, &words, e, sizeof(e));
    strvec_free(&words);
    if (rc != 0)
        return errf(err, errlen, "--%s: %s", d->name, e);
    append(field, v);
    return 0;
}

static int apply_text(struct poprun_options *o, const struct opt_def *d, const char *value,
                      char *err, size_t errlen)
{
    char **field = (char **)((char *)o + d->offset);
    if (d->kind == K_APPEND)
        return add_words(d, value, field, err, errlen);
    if (d->kind == K_ENV)
        return add_env(d, value, field, err, errlen);
    int rc = d->kind == K_CHOICE ? check_choice(d, value, err, errlen)
                                 : check_word(d, value, err, errlen);
    if (rc != 0)
        return rc;
    free(*field);
    *field = xstrdup(value);
    return 0;
}

int opt_apply(struct poprun_options *o, const struct opt_def *d, const char *value, char *err,
              size_t errlen)
{
    int *ifield = (int *)((char *)o + d->offset);
    if (!value && opt_takes_value(d))
        return errf(err, errlen, "--%s needs a value", d->name);
    switch (d->kind) {
    case K_POSINT:
        return set_int(d, value, 1, OPT_INT_MAX, ifield, err, errlen);
    case K_NONNEG:
        return set_int(d, value, 0, OPT_INT_MAX, ifield, err, errlen);
    case K_PORT:
        return set_int(d, value, 1, 65535, ifield, err, errlen);
    case K_SECONDS:
        return set_int(d, value, 1, 31536000, ifield, err, errlen);
    case K_BOOL:
        if (!value)
            return *ifield = 1, 0;
        if ((*ifield = opt_parse_bool(value)) >= 0)
            return 0;
        return errf(err, errlen, "--%s takes a boolean (1/0, yes/no, on/off, true/false), not '%s'",
                    d->name, value);
    case K_COUNT:
        if (!value)
            return (*ifield)++, 0;
        if (parse_int_range(value, 0, 9, ifield) != 0)
            return errf(err, errlen, "--%s takes a level from 0 to 9, not '%s'", d->name, value);
        return 0;
    default:
        return apply_text(o, d, value, err, errlen);
    }
}

const struct opt_def *opt_find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < opt_count; i++) {
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    }
    return NULL;
}

const struct opt_def *opt_find_short(char c)
{
    for (size_t i = 0; i < opt_count; i++) {
        if (opt_table[i].short_name == c)
            return &opt_table[i];
    }
    return NULL;
}

int options_set(struct poprun_options *o, const char *name, const char *value, char *err,
                size_t errlen)
{
    const struct opt_def *d = opt_find_long(name, strlen(name));
    if (!d || (d->flags & F_HIDDEN))
        return errf(err, errlen, "unknown option '%s'", name);
    if (!(d->flags & F_CONFIG))
        return errf(err, errlen, "%s cannot be set in a config file", name);
    return opt_apply(o, d, value, err, errlen);
}

/* Calls FN for each word of the -x list TEXT. */
static int visit_words(const char *name, const char *text,
                       int (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
    struct strvec words = STRVEC_INIT;
    char err[128];
    int rc = words_split(text, &words, err, sizeof(err));
    for (int i = 0; rc == 0 && i < words.n; i++)
        rc = fn(ctx, name, words.v[i]);
    strvec_free(&words);
    return rc;
}

/* The text of D's value in O for a config file, in BUF or the field itself; NULL when unset. */
static const char *config_value(const struct poprun_options *o, const struct opt_def *d, char *buf,
                                size_t len)
{
    const void *field = (const char *)o + d->offset;
    int v = *(const int *)field;
    switch (d->kind) {
    case K_POSINT:
    case K_PORT:
    case K_SECONDS:
        /* Unset: num-ilds 0 is "auto"; ports and timeouts 0 were not given. */
        if (v <= 0)
            return NULL;
        break;
    case K_NONNEG:
        if (v < 0) /* only-output-from-instance -1 is "all" */
            return NULL;
        break;
    case K_COUNT:
        break;
    case K_BOOL:
        return v < 0 ? NULL : v ? "true" : "false";
    default:
        return *(char *const *)field;
    }
    snprintf(buf, len, "%d", v);
    return buf;
}

int options_table_visit(const struct poprun_options *o,
                        int (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
    for (size_t i = 0; i < opt_count; i++) {
        const struct opt_def *d = &opt_table[i];
        char buf[32];
        if (!(d->flags & F_CONFIG))
            continue;
        const char *value = config_value(o, d, buf, sizeof(buf));
        if (!value)
            continue;
        int rc = d->kind == K_ENV ? visit_words(d->name, value, fn, ctx) : fn(ctx, d->name, value);
        if (rc != 0)
            return -1;
    }
    return 0;
}
