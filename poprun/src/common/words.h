/*
 * Splitting option values into words without a shell, and quoting words for display.
 *
 * Quoting rules of words_split (a subset of POSIX sh, with no expansion of any kind):
 *   - unquoted blanks (space, tab, newline) separate words;
 *   - '...' keeps everything up to the next single quote literally;
 *   - "..." keeps everything literally except \" and \\, which stand for " and \;
 *   - outside quotes, a backslash makes the next character literal;
 *   - $, ~, *, ?, ;, |, backquotes and the like are ordinary characters;
 *   - "" and '' make an empty word.
 * So --mpi-global-args="--mca btl_tcp_if_include '10.0.0.0/24' -x 'A=a b'" gives five words.
 */
#ifndef POPRUN_WORDS_H
#define POPRUN_WORDS_H

#include <stddef.h>

#include "common/util.h"

/* Appends the words of S to OUT. Returns 0, or -1 (unterminated quote, trailing backslash) with a
 * one-line reason in ERR; OUT may then hold the words before the error. */
int words_split(const char *s, struct strvec *out, char *err, size_t errlen);

/* WORD quoted so that a POSIX shell and words_split both read it back as one word: unchanged when
 * it holds only safe characters, else single-quoted. Returns a new string. */
char *words_quote(const char *word);

/* The words of SV, each quoted by words_quote, joined by single spaces. Returns a new string. */
char *words_join_quoted(const struct strvec *sv);

#endif /* POPRUN_WORDS_H */
