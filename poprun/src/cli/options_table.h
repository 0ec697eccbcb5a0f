/*
 * poprun's option table (options_table.c), read by the command-line parser and the help text
 * (options.c) and by the configuration files (config_file.c). Adding an option is one entry in the table
 * (and a field in struct poprun_options): parsing, checking, --help, the README table and config
 * files follow.
 */
#ifndef POPRUN_OPTIONS_TABLE_H
#define POPRUN_OPTIONS_TABLE_H

#include <stddef.h>

#include "cli/settings.h"

enum opt_kind {
    K_POSINT,  /* a positive integer */
    K_NONNEG,  /* a non-negative integer */
    K_STRING,  /* any text */
    K_PATH,    /* a non-empty path */
    K_BOOL,    /* 1/0, yes/no, on/off, true/false; bare means 1 (int field) */
    K_COUNT,   /* no value, counts repetitions (-vv); --verbose=N sets it */
    K_APPEND,  /* mpirun words: each occurrence is checked and added to the others */
    K_ENV,     /* NAME[=VALUE]: each occurrence is added (quoted) to the others */
    K_CHOICE,  /* one of opt_def.choices ("a|b") */
    K_NAME,    /* a V-IPU name: letters, digits, '.', '_', '-' */
    K_HOST,    /* a host name or an IP address */
    K_PORT,    /* a TCP port, 1 to 65535 */
    K_SECONDS, /* a positive number of whole seconds */
    K_SUBNET,  /* an IPv4 subnet a.b.c.d/n, or a network interface name */
};

enum opt_flags {
    F_CONFIG = 1,   /* written by --export-config, read by --import-config */
    F_HIDDEN = 2,   /* not in --help */
    F_NOEFFECT = 4, /* accepted and checked, reported as having no effect on simulated IPUs */
};

struct opt_def {
    const char *name; /* long name, without "--" */
    char short_name;  /* or 0 */
    enum opt_kind kind;
    size_t offset; /* of the field in struct poprun_options */
    unsigned flags;
    const char *metavar;
    const char *defval;  /* default, as shown by --help */
    const char *choices; /* K_CHOICE: "a|b" */
    const char *poprun;  /* what the option means to Graphcore's PopRun */
    const char *here;    /* what it does here (NULL: the same as PopRun's) */
};

extern const struct opt_def opt_table[];
extern const size_t opt_count;

/* Whether D takes a value that is not optional (everything but flags, booleans and counts). */
int opt_takes_value(const struct opt_def *d);
/* Whether TEXT is a boolean word, and which: 1 or 0, or -1 when it is not one. */
int opt_parse_bool(const char *text);
/* Applies D with VALUE (NULL when given bare) to O. Returns 0, or -1 with one line in ERR. */
int opt_apply(struct poprun_options *o, const struct opt_def *d, const char *value, char *err,
              size_t errlen);

/* The entry of the long option NAME (LEN bytes of it), or of the short option C; NULL if none. */
const struct opt_def *opt_find_long(const char *name, size_t len);
const struct opt_def *opt_find_short(char c);

/* Applies one option by its long NAME (without "--") and VALUE (NULL for a flag given without
 * one), as a config file does: only the options that config files carry (not help, version,
 * dry-run, import-config or export-config). Returns 0, or -1 with a reason in ERR. */
int options_set(struct poprun_options *o, const char *name, const char *value, char *err,
                size_t errlen);

/* Calls FN with the long name and value text of every option that config files carry and that
 * is set (strings) or meaningful (numbers, flags), in table order. Stops and returns -1 when
 * FN does. */
int options_table_visit(const struct poprun_options *o,
                        int (*fn)(void *ctx, const char *name, const char *value), void *ctx);

#endif /* POPRUN_OPTIONS_TABLE_H */
