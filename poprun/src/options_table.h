/*
 * poprun's option table, shared by the parser and help text (options.c) and the table itself
 * (options_table.c). Adding an option is one entry in the table (and a field in
 * struct poprun_options): parsing, checking, --help, the README table and config files follow.
 */
#ifndef POPRUN_OPTIONS_DEF_H
#define POPRUN_OPTIONS_DEF_H

#include <stddef.h>

#include "options.h"

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

#endif /* POPRUN_OPTIONS_DEF_H */
