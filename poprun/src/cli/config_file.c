/*
 * --export-config and --import-config: the options as a text file.
 *
 *   # poprun configuration (poprun --export-config)
 *   num-replicas = 16
 *   host = h1,h2
 *   mpi-global-args = --mca btl tcp,self
 *   program = build/bin/train
 *   args = --epochs 2 'a b'
 *
 * One "name = value" a line; names are the long options without "--", plus "program" and "args"
 * (the program's arguments, split into words by the rules of words.h). The value is the rest of
 * the line with surrounding blanks removed, taken literally. '#' starts a comment line.
 */
#include "cli/config_file.h"

#include "cli/options_table.h"
#include "common/words.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int write_pair(void *ctx, const char *name, const char *value)
{
    FILE *f = ctx;
    return fprintf(f, "%s = %s\n", name, value) < 0 ? -1 : 0;
}

int options_write_config(const struct poprun_options *o, FILE *f, char *err, size_t errlen)
{
    fputs("# poprun configuration (poprun --export-config); read back with --import-config.\n"
          "# One \"name = value\" a line, names as the long options; the command line overrides.\n",
          f);
    for (int i = 0; i < o->program.n; i++) {
        if (strchr(o->program.v[i], '\n'))
            return errf(err, errlen, "cannot export a program argument that holds a newline");
    }
    if (options_table_visit(o, write_pair, f) != 0)
        return errf(err, errlen, "cannot write the configuration: %s", strerror(errno));
    if (o->program.n > 0) {
        char *prog = words_quote(o->program.v[0]);
        struct strvec args = {o->program.v + 1, o->program.n - 1, 0};
        char *a = words_join_quoted(&args);
        fprintf(f, "program = %s\nargs = %s\n", prog, a);
        free(prog);
        free(a);
    }
    if (ferror(f))
        return errf(err, errlen, "cannot write the configuration: %s", strerror(errno));
    return 0;
}

int options_export_config(const struct poprun_options *o, const char *path, char *err,
                          size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return errf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    char e[256];
    int rc = options_write_config(o, f, e, sizeof(e));
    if (fclose(f) != 0 && rc == 0)
        rc = errf(e, sizeof(e), "%s", strerror(errno));
    if (rc != 0)
        return errf(err, errlen, "cannot write %s: %s", path, e);
    return 0;
}

static char *trim(char *s)
{
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Applies "program" or "args" from a config file. */
static int set_program(struct poprun_options *o, const char *name, const char *value, char *err,
                       size_t errlen)
{
    struct strvec words = STRVEC_INIT;
    if (words_split(value, &words, err, errlen) != 0) {
        strvec_free(&words);
        return -1;
    }
    if (strcmp(name, "program") == 0 && words.n != 1) {
        strvec_free(&words);
        return errf(err, errlen, "program needs exactly one word (put its arguments in args)");
    }
    struct strvec next = STRVEC_INIT;
    if (strcmp(name, "program") == 0) {
        strvec_push(&next, words.v[0]);
        for (int i = 1; i < o->program.n; i++)
            strvec_push(&next, o->program.v[i]);
    } else {
        strvec_push(&next, o->program.n > 0 ? o->program.v[0] : "");
        strvec_extend(&next, &words);
    }
    strvec_free(&words);
    strvec_free(&o->program);
    o->program = next;
    return 0;
}

static int load_line(struct poprun_options *o, char *line, char *err, size_t errlen)
{
    char *eq = strchr(line, '=');
    if (!eq)
        return errf(err, errlen, "expected \"name = value\"");
    *eq = '\0';
    char *name = trim(line), *value = trim(eq + 1);
    if (strcmp(name, "program") == 0 || strcmp(name, "args") == 0)
        return set_program(o, name, value, err, errlen);
    return options_set(o, name, value, err, errlen);
}

int options_load_config(struct poprun_options *o, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errf(err, errlen, "cannot read config %s: %s", path, strerror(errno));
    char *line = NULL, e[256];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        char *s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        if (load_line(o, s, e, sizeof(e)) != 0)
            rc = errf(err, errlen, "%s:%d: %s", path, lineno, e);
    }
    free(line);
    fclose(f);
    /* "args" without "program" leaves an empty program name: refuse it here, not at exec time. */
    if (rc == 0 && o->program.n > 0 && o->program.v[0][0] == '\0')
        rc = errf(err, errlen, "%s: args given without program", path);
    return rc;
}
