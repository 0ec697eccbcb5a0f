/*
 * poprun's option table, command-line parser and help text; see options.h.
 *
 * The parser is our own rather than getopt_long: it keeps no global state (the unit tests call it
 * many times), stops at the first word that is not an option (the program), and words every
 * error the same way.
 */
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Largest count accepted for replicas, instances and IPUs, so that products stay in an int. */
#define OPT_INT_MAX 1048576

enum opt_kind {
    K_POSINT, /* a positive integer */
    K_NONNEG, /* a non-negative integer */
    K_STRING, /* any text */
    K_FLAG,   /* no value; --flag=false turns it off */
    K_COUNT,  /* no value, counts repetitions (-vv); --verbose=N sets it */
};

enum opt_flags {
    F_CONFIG = 1, /* written by --export-config, read by --import-config */
    F_HIDDEN = 2, /* not in --help */
};

struct opt_def {
    const char *name; /* long name, without "--" */
    char short_name;  /* or 0 */
    enum opt_kind kind;
    size_t offset; /* of the field in struct poprun_options */
    unsigned flags;
    const char *metavar;
    const char *defval; /* default, as shown by --help */
    const char *help;
};

#define OFF(field) offsetof(struct poprun_options, field)

static const struct opt_def opt_table[] = {
    {"num-replicas", 0, K_POSINT, OFF(num_replicas), F_CONFIG, "N", "1",
     "Replicas in the job (copies of the model, each on --ipus-per-replica IPUs)."},
    {"num-instances", 0, K_POSINT, OFF(num_instances), F_CONFIG, "N", "1",
     "Instances (processes, MPI ranks) to start; each hosts an equal, contiguous block of "
     "replicas."},
    {"ipus-per-replica", 0, K_POSINT, OFF(ipus_per_replica), F_CONFIG, "N", "1",
     "Simulated IPUs per replica."},
    {"host", 'H', K_STRING, OFF(host), F_CONFIG, "HOSTS", "this host only",
     "Hosts to run on: h0,h1 or h[0-2,4]; instances are divided evenly among them, in order."},
    {"hostfile", 0, K_STRING, OFF(hostfile), F_CONFIG, "FILE", "none",
     "Read the hosts from FILE, one a line ('#' comments; words after the first are ignored)."},
    {"num-ilds", 0, K_POSINT, OFF(num_ilds), F_CONFIG, "N", "as many as the IPUs need",
     "IPU-Link domains the job spans; replicas and instances are divided evenly among them."},
    {"mpi-global-args", 0, K_STRING, OFF(mpi_global_args), F_CONFIG, "ARGS", "none",
     "Extra global options for mpirun, split into words by shell-like quoting (no expansion)."},
    {"mpi-local-args", 0, K_STRING, OFF(mpi_local_args), F_CONFIG, "ARGS", "none",
     "Extra options for mpirun's application context (e.g. \"-x VAR\"), placed before the "
     "program."},
    {"numa-aware", 0, K_FLAG, OFF(numa_aware), F_CONFIG, NULL, "off",
     "Bind the instances of each host to its NUMA nodes, round-robin (hwloc)."},
    {"print-topology", 0, K_FLAG, OFF(print_topology), F_CONFIG, NULL, "off",
     "Print the table of hosts, IPU-Link domains, instances, replicas and IPUs, then run."},
    {"only-output-from-instance", 0, K_NONNEG, OFF(only_output_from_instance), F_CONFIG, "N", "all",
     "Show the output of instance N only (the others' output is dropped)."},
    {"offline-mode", 0, K_FLAG, OFF(offline_mode), F_CONFIG, NULL, "off",
     "Phantom buffers: sizes but no payload, simulated time only (GCL_SIM_PHANTOM=1)."},
    {"topology", 0, K_STRING, OFF(topology), F_CONFIG, "PRESET|FILE", "smallest that fits",
     "Simulated pod: M2000, POD16, POD64, POD128, POD256, or a topology file."},
    {"export-config", 0, K_STRING, OFF(export_config), 0, "FILE", "none",
     "Write the options (and program) to FILE, then go on (add --dry-run to stop there)."},
    {"import-config", 0, K_STRING, OFF(import_config), 0, "FILE", "none",
     "Read options from FILE; options on the command line override it."},
    {"dry-run", 0, K_FLAG, OFF(dry_run), 0, NULL, "off",
     "Print the plan and the mpirun command line; run nothing."},
    {"verbose", 'v', K_COUNT, OFF(verbose), F_CONFIG, NULL, "0",
     "-v: print the plan and the mpirun command; -vv: also each instance's POPDIST_* variables."},
    {"help", 'h', K_FLAG, OFF(help), 0, NULL, NULL, "Print this help and exit."},
    {"version", 0, K_FLAG, OFF(version), 0, NULL, NULL, "Print the version and exit."},
    {"_instance", 0, K_STRING, OFF(instance_token), F_HIDDEN, "TOKEN", NULL,
     "Internal: run as the wrapper of one instance (started by mpirun)."},
};

#define OPT_COUNT (sizeof(opt_table) / sizeof(opt_table[0]))

void options_init(struct poprun_options *o)
{
    memset(o, 0, sizeof(*o));
    o->num_replicas = 1;
    o->num_instances = 1;
    o->ipus_per_replica = 1;
    o->only_output_from_instance = -1;
}

void options_free(struct poprun_options *o)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (opt_table[i].kind == K_STRING)
            free(*(char **)((char *)o + opt_table[i].offset));
    }
    strvec_free(&o->program);
    options_init(o);
}

static const struct opt_def *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    }
    return NULL;
}

static const struct opt_def *find_short(char c)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (opt_table[i].short_name == c)
            return &opt_table[i];
    }
    return NULL;
}

static bool takes_value(const struct opt_def *d)
{
    return d->kind == K_POSINT || d->kind == K_NONNEG || d->kind == K_STRING;
}

static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return *out = true, 0;
        if (strcasecmp(v, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

static int set_int(const struct opt_def *d, const char *v, int *field, char *err, size_t errlen)
{
    if (!v)
        return errf(err, errlen, "--%s needs a value", d->name);
    long min = d->kind == K_POSINT ? 1 : 0;
    size_t len = strlen(v);
    bool digits = len > 0 && strspn(v, "0123456789") == len;
    int n;
    if (digits && parse_int_range(v, min, OPT_INT_MAX, &n) == 0) {
        *field = n;
        return 0;
    }
    if (digits && strspn(v, "0") != len)
        return errf(err, errlen, "--%s %s is too large (at most %d)", d->name, v, OPT_INT_MAX);
    return errf(err, errlen, "--%s must be %s integer, not '%s'", d->name,
                d->kind == K_POSINT ? "a positive" : "a non-negative", v);
}

/* Applies definition D with VALUE (NULL when a flag or count was given bare). */
static int apply(struct poprun_options *o, const struct opt_def *d, const char *value, char *err,
                 size_t errlen)
{
    void *field = (char *)o + d->offset;
    switch (d->kind) {
    case K_POSINT:
    case K_NONNEG:
        return set_int(d, value, field, err, errlen);
    case K_STRING:
        free(*(char **)field);
        *(char **)field = xstrdup(value);
        return 0;
    case K_FLAG:
        if (!value)
            return *(bool *)field = true, 0;
        if (parse_bool(value, field) != 0)
            return errf(err, errlen, "--%s takes true or false, not '%s'", d->name, value);
        return 0;
    case K_COUNT:
        if (!value)
            return (*(int *)field)++, 0;
        if (parse_int_range(value, 0, 9, field) != 0)
            return errf(err, errlen, "--%s takes a level from 0 to 9, not '%s'", d->name, value);
        return 0;
    }
    return errf(err, errlen, "--%s: unknown option kind", d->name);
}

int options_set(struct poprun_options *o, const char *name, const char *value, char *err,
                size_t errlen)
{
    const struct opt_def *d = find_long(name, strlen(name));
    if (!d || (d->flags & F_HIDDEN))
        return errf(err, errlen, "unknown option '%s'", name);
    if (!(d->flags & F_CONFIG))
        return errf(err, errlen, "%s cannot be set in a config file", name);
    if (takes_value(d) && !value)
        return errf(err, errlen, "--%s needs a value", d->name);
    return apply(o, d, value, err, errlen);
}

/* One option occurrence found on the command line, applied after --import-config. */
struct occurrence {
    const struct opt_def *def;
    const char *value;
};

/* Reads the long option ARGV[*I] (it starts with "--"). */
static int scan_long(int argc, char *const argv[], int *i, struct occurrence *occ, char *err,
                     size_t errlen)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const struct opt_def *d = find_long(arg, len);
    if (!d)
        return errf(err, errlen, "unknown option '--%.*s' (see poprun --help)", (int)len, arg);
    occ->def = d;
    occ->value = eq ? eq + 1 : NULL;
    if (takes_value(d) && !eq) {
        if (*i + 1 >= argc)
            return errf(err, errlen, "--%s needs a value", d->name);
        occ->value = argv[++*i];
    }
    return 0;
}

/* Reads the cluster of short options ARGV[*I] ("-v", "-vv", "-H h1", "-Hh1"). Appends to OCC. */
static int scan_short(int argc, char *const argv[], int *i, struct occurrence *occ, int *nocc,
                      char *err, size_t errlen)
{
    for (const char *p = argv[*i] + 1; *p; p++) {
        const struct opt_def *d = find_short(*p);
        if (!d)
            return errf(err, errlen, "unknown option '-%c' (see poprun --help)", *p);
        struct occurrence *oc = &occ[(*nocc)++];
        oc->def = d;
        oc->value = NULL;
        if (takes_value(d)) {
            if (p[1] != '\0') {
                oc->value = p + 1;
            } else if (*i + 1 < argc) {
                oc->value = argv[++*i];
            } else {
                return errf(err, errlen, "-%c needs a value", *p);
            }
            break;
        }
    }
    return 0;
}

/* Splits ARGV into option occurrences and the index where the program starts (ARGC if none). */
static int scan(int argc, char *const argv[], struct occurrence *occ, int *nocc, int *prog,
                char *err, size_t errlen)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        int rc = a[1] == '-' ? scan_long(argc, argv, &i, &occ[(*nocc)++], err, errlen)
                             : scan_short(argc, argv, &i, occ, nocc, err, errlen);
        if (rc != 0)
            return -1;
    }
    *prog = i;
    return 0;
}

int options_parse(struct poprun_options *o, int argc, char *const argv[], char *err, size_t errlen)
{
    /* Each word yields at most as many occurrences as it has characters. */
    size_t cap = 1;
    for (int i = 1; i < argc; i++)
        cap += strlen(argv[i]);
    struct occurrence *occ = xcalloc(cap, sizeof(*occ));
    int nocc = 0, prog = argc, rc = scan(argc, argv, occ, &nocc, &prog, err, errlen);
    const char *import = NULL;
    for (int k = 0; rc == 0 && k < nocc; k++) {
        if (occ[k].def->offset == OFF(import_config))
            import = occ[k].value;
    }
    if (rc == 0 && import)
        rc = options_load_config(o, import, err, errlen);
    for (int k = 0; rc == 0 && k < nocc; k++)
        rc = apply(o, occ[k].def, occ[k].value, err, errlen);
    if (rc == 0 && prog < argc) {
        strvec_free(&o->program);
        for (int i = prog; i < argc; i++)
            strvec_push(&o->program, argv[i]);
    }
    free(occ);
    return rc;
}

/* Writes TEXT wrapped at HELP_WIDTH columns, continuation lines indented by HELP_INDENT. */
#define HELP_WIDTH  100
#define HELP_INDENT 30

static void print_wrapped(FILE *f, int col, const char *text)
{
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > HELP_INDENT && col + 1 + (int)word > HELP_WIDTH) {
            /* The word does not fit: continue on the next line. */
            fprintf(f, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            fputc(' ', f);
            col++;
        }
        for (size_t i = 0; i < word; i++)
            fputc(text[i] == '\x01' ? ' ' : text[i], f); /* \x01: a space that never breaks */
        col += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

/* Writes one option of the help text: "  -H, --host HOSTS", then its help and default. */
static void print_option_help(FILE *f, const struct opt_def *d)
{
    char head[80], text[512];
    if (d->short_name)
        snprintf(head, sizeof(head), "  -%c, --%s%s%s", d->short_name, d->name,
                 d->metavar ? " " : "", d->metavar ? d->metavar : "");
    else
        snprintf(head, sizeof(head), "  --%s%s%s", d->name, d->metavar ? " " : "",
                 d->metavar ? d->metavar : "");
    snprintf(text, sizeof(text), "%s%s%s%s", d->help, d->defval ? " [default:\x01" : "",
             d->defval ? d->defval : "", d->defval ? "]" : "");
    int col = fprintf(f, "%s", head);
    if (col >= HELP_INDENT) {
        fprintf(f, "\n%*s", HELP_INDENT, "");
    } else {
        fprintf(f, "%*s", HELP_INDENT - col, "");
    }
    print_wrapped(f, HELP_INDENT, text);
}

void options_print_help(FILE *f)
{
    fputs("Usage: poprun [options] PROGRAM [ARGS...]\n"
          "\n"
          "Starts --num-instances copies of PROGRAM through OpenMPI's mpirun, on this host or on\n"
          "the hosts of --host/--hostfile, and gives each its share of --num-replicas replicas of\n"
          "--ipus-per-replica simulated IPUs through POPDIST_* environment variables. Each output\n"
          "line of instance N is prefixed with \"[instance N] \".\n"
          "\n"
          "Options (\"--name value\" or \"--name=value\"; options stop at PROGRAM or \"--\"):\n",
          f);
    for (size_t i = 0; i < OPT_COUNT; i++) {
        if (!(opt_table[i].flags & F_HIDDEN))
            print_option_help(f, &opt_table[i]);
    }
    fputs("\n"
          "Exit status: 0 when every instance succeeded; the first failing instance's status\n"
          "(128+N when killed by signal N); 2 for a usage error of poprun itself.\n"
          "Ctrl-C or SIGTERM ends every instance on every host; a second Ctrl-C kills mpirun.\n",
          f);
}

int options_table_visit(const struct poprun_options *o,
                        int (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const struct opt_def *d = &opt_table[i];
        const void *field = (const char *)o + d->offset;
        char buf[32];
        const char *value = buf;
        if (!(d->flags & F_CONFIG))
            continue;
        switch (d->kind) {
        case K_POSINT:
        case K_NONNEG:
        case K_COUNT:
            /* Unset: num-ilds 0 is "auto", only-output-from-instance -1 is "all". */
            if ((d->kind == K_POSINT && *(const int *)field <= 0) ||
                (d->kind == K_NONNEG && *(const int *)field < 0))
                continue;
            snprintf(buf, sizeof(buf), "%d", *(const int *)field);
            break;
        case K_STRING:
            value = *(char *const *)field;
            if (!value)
                continue;
            break;
        case K_FLAG:
            value = *(const bool *)field ? "true" : "false";
            break;
        }
        if (fn(ctx, d->name, value) != 0)
            return -1;
    }
    return 0;
}
