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

#include "cli/settings.h"
#include "common/util.h"

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

/* Writes the help text (every option, its default, PopRun's meaning and ours) to F. */
void options_print_help(FILE *f);
/* Writes the options as the Markdown table of poprun/README.md to F. */
void options_print_markdown(FILE *f);

#endif /* POPRUN_OPTIONS_H */
