/*
 * poprun's command-line parser, help text and config-file view of the options; see options.h.
 * The table itself is in options_table.c.
 *
 * The parser is our own rather than getopt_long: it keeps no global state (the unit tests call it
 * many times), stops at the first word that is not an option (the program), and words every
 * error the same way.
 */
#include "cli/options.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/config_file.h"
#include "cli/options_table.h"
#include "common/words.h"

void options_init(struct poprun_options *o)
{
    memset(o, 0, sizeof(*o));
    o->num_replicas = 1;
    o->num_instances = 1;
    o->ipus_per_replica = 1;
    o->only_output_from_instance = -1;
    o->allow_run_as_root = -1;
    o->update_partition = o->reset_partition = o->remove_partition = -1;
    o->sync_python_venv = o->sync_poplar_sdk = o->distribute_ssh_key = -1;
    o->graceful_timeout = 30;
}

/* Whether D's field holds a string that options_free must free. */
static bool owns_string(const struct opt_def *d)
{
    return d->kind != K_POSINT && d->kind != K_NONNEG && d->kind != K_BOOL && d->kind != K_COUNT &&
           d->kind != K_PORT && d->kind != K_SECONDS;
}

void options_free(struct poprun_options *o)
{
    for (size_t i = 0; i < opt_count; i++) {
        if (owns_string(&opt_table[i]))
            free(*(char **)((char *)o + opt_table[i].offset));
    }
    strvec_free(&o->program);
    options_init(o);
}

int options_spread_numa(const struct poprun_options *o)
{
    if (o->process_placement)
        return strcmp(o->process_placement, "spreadnuma") == 0;
    return o->numa_aware > 0;
}

void options_report_no_effect(const struct poprun_options *o, FILE *f)
{
    for (size_t i = 0; i < opt_count; i++) {
        const struct opt_def *d = &opt_table[i];
        const void *field = (const char *)o + d->offset;
        if (!(d->flags & F_NOEFFECT))
            continue;
        bool given = owns_string(d) ? *(char *const *)field != NULL
                                    : *(const int *)field != (d->kind == K_BOOL ? -1 : 0);
        if (given)
            fprintf(f, "poprun: --%s has no effect on simulated IPUs\n", d->name);
    }
}

/* One option occurrence found on the command line, applied after --import-config. */
struct occurrence {
    const struct opt_def *def;
    const char *value;
};

/* Whether WORD can be the program: a path (it has a '/'), or an executable on PATH, as
 * execvp would find it. */
static bool names_program(const char *word)
{
    if (strchr(word, '/'))
        return true;
    const char *path = getenv("PATH");
    if (!path || !*word)
        return false;
    size_t wl = strlen(word);
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dl = end ? (size_t)(end - p) : strlen(p);
        char *file = xmalloc(dl + wl + 3);
        snprintf(file, dl + wl + 3, "%.*s/%s", (int)(dl ? dl : 1), dl ? p : ".", word);
        bool found = access(file, X_OK) == 0;
        free(file);
        if (found || !end)
            return found;
        p = end;
    }
}

/* Reads the long option ARGV[*I] (it starts with "--"). A boolean given without "=" takes the
 * next word as its value when that word is a boolean (--numa-aware 1), as PopRun does; a next
 * word that is neither a boolean, an option nor a program (--print-topology maybe) is a bad
 * value, not the program. */
static int scan_long(int argc, char *const argv[], int *i, struct occurrence *occ, char *err,
                     size_t errlen)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const struct opt_def *d = opt_find_long(arg, len);
    if (!d)
        return errf(err, errlen, "unknown option '--%.*s' (see poprun --help)", (int)len, arg);
    occ->def = d;
    occ->value = eq ? eq + 1 : NULL;
    if (!eq && opt_takes_value(d)) {
        if (*i + 1 >= argc)
            return errf(err, errlen, "--%s needs a value", d->name);
        occ->value = argv[++*i];
    } else if (!eq && d->kind == K_BOOL && *i + 1 < argc) {
        const char *next = argv[*i + 1];
        if (opt_parse_bool(next) >= 0)
            occ->value = argv[++*i];
        else if (next[0] != '-' && !names_program(next))
            return errf(err, errlen,
                        "--%s takes a boolean (1/0, yes/no, on/off, true/false), not '%s' (and "
                        "'%s' is no program: no such file on PATH)",
                        d->name, next, next);
    }
    return 0;
}

/* Reads the cluster of short options ARGV[*I] ("-v", "-vv", "-H h1", "-Hh1"). Appends to OCC. */
static int scan_short(int argc, char *const argv[], int *i, struct occurrence *occ, int *nocc,
                      char *err, size_t errlen)
{
    for (const char *p = argv[*i] + 1; *p; p++) {
        const struct opt_def *d = opt_find_short(*p);
        if (!d)
            return errf(err, errlen, "unknown option '-%c' (see poprun --help)", *p);
        struct occurrence *oc = &occ[(*nocc)++];
        oc->def = d;
        oc->value = NULL;
        if (opt_takes_value(d)) {
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
        if (occ[k].def->offset == offsetof(struct poprun_options, import_config))
            import = occ[k].value;
    }
    if (rc == 0 && import)
        rc = options_load_config(o, import, err, errlen);
    for (int k = 0; rc == 0 && k < nocc; k++)
        rc = opt_apply(o, occ[k].def, occ[k].value, err, errlen);
    if (rc == 0 && prog < argc) {
        strvec_free(&o->program);
        for (int i = prog; i < argc; i++)
            strvec_push(&o->program, argv[i]);
    }
    if (o->vv > 0 && o->verbose < 2)
        o->verbose = 2;
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

/* "  -H, --host HOSTS" */
static void option_head(char *buf, size_t len, const struct opt_def *d, const char *sep)
{
    if (d->short_name)
        snprintf(buf, len, "-%c%s--%s%s%s", d->short_name, sep, d->name, d->metavar ? " " : "",
                 d->metavar ? d->metavar : "");
    else
        snprintf(buf, len, "--%s%s%s", d->name, d->metavar ? " " : "",
                 d->metavar ? d->metavar : "");
}

/* Writes one option of the help text: "  -H, --host HOSTS", then what it means to PopRun, what
 * it does here, and its default. */
static void print_option_help(FILE *f, const struct opt_def *d)
{
    char head[80], text[768];
    option_head(head, sizeof(head), d, ", ");
    snprintf(text, sizeof(text), "%s%s%s%s%s%s%s", d->poprun ? "PopRun: " : "",
             d->poprun ? d->poprun : "", d->poprun ? " Here: " : "",
             d->here ? d->here : "The same.", d->defval ? " [default:\x01" : "",
             d->defval ? d->defval : "", d->defval ? "]" : "");
    int col = fprintf(f, "  %s", head);
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
          "Options (\"--name value\" or \"--name=value\"; a boolean is 1/0, yes/no, on/off or\n"
          "true/false, and alone means yes; options stop at PROGRAM or \"--\"):\n",
          f);
    for (size_t i = 0; i < opt_count; i++) {
        if (!(opt_table[i].flags & F_HIDDEN))
            print_option_help(f, &opt_table[i]);
    }
    fputs("\n"
          "Exit status: 0 when every instance succeeded; the first failing instance's status\n"
          "(128+N when killed by signal N); 2 for a usage error of poprun itself.\n"
          "Ctrl-C or SIGTERM stops every instance on every host, giving each --graceful-timeout\n"
          "seconds to end by itself; a second Ctrl-C kills mpirun.\n",
          f);
}

/* TEXT with '|' escaped for a Markdown table cell. */
static void put_cell(FILE *f, const char *text)
{
    for (; *text; text++) {
        if (*text == '|')
            fputc('\\', f);
        fputc(*text, f);
    }
}

void options_print_markdown(FILE *f)
{
    fputs("| Option | Default | PopRun | Here |\n|---|---|---|---|\n", f);
    for (size_t i = 0; i < opt_count; i++) {
        const struct opt_def *d = &opt_table[i];
        char head[80];
        if (d->flags & F_HIDDEN)
            continue;
        option_head(head, sizeof(head), d, "`, `");
        fputs("| `", f);
        put_cell(f, head);
        fputs("` | ", f);
        put_cell(f, d->defval ? d->defval : "");
        fputs(" | ", f);
        put_cell(f, d->poprun ? d->poprun : "(ours)");
        fputs(" | ", f);
        put_cell(f, d->here ? d->here : "The same.");
        fputs(" |\n", f);
    }
}
