/*
 * Word splitting and quoting without a shell; the rules are in words.h.
 */
#include "common/words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct wbuf {
    char *s;
    size_t len, cap;
};

static void wbuf_putc(struct wbuf *b, char c)
{
    if (b->len + 2 > b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->s = xrealloc(b->s, b->cap);
    }
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Reads the quoted part that starts at *P (on the opening quote) into B and advances *P past the
 * closing quote. */
static int read_quoted(const char **p, struct wbuf *b, char *err, size_t errlen)
{
    char q = **p;
    const char *s = *p + 1;
    for (; *s && *s != q; s++) {
        if (q == '"' && *s == '\\' && (s[1] == '"' || s[1] == '\\'))
            s++;
        wbuf_putc(b, *s);
    }
    if (*s != q)
        return errf(err, errlen, "unterminated %s quote", q == '"' ? "double" : "single");
    *p = s + 1;
    return 0;
}

int words_split(const char *s, struct strvec *out, char *err, size_t errlen)
{
    const char *p = s ? s : "";
    for (;;) {
        while (is_blank(*p))
            p++;
        if (*p == '\0')
            return 0;
        struct wbuf b = {xcalloc(1, 1), 0, 1};
        while (*p && !is_blank(*p)) {
            if (*p == '\'' || *p == '"') {
                if (read_quoted(&p, &b, err, errlen) != 0) {
                    free(b.s);
                    return -1;
                }
            } else if (*p == '\\') {
                if (p[1] == '\0') {
                    free(b.s);
                    return errf(err, errlen, "ends with a lone backslash");
                }
                wbuf_putc(&b, p[1]);
                p += 2;
            } else {
                wbuf_putc(&b, *p++);
            }
        }
        strvec_push_take(out, b.s);
    }
}

static bool is_safe(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("_@%+=:,./-", c) != NULL;
}

char *words_quote(const char *word)
{
    bool safe = *word != '\0';
    for (const char *p = word; *p && safe; p++)
        safe = is_safe(*p);
    if (safe)
        return xstrdup(word);
    struct wbuf b = {xcalloc(1, 1), 0, 1};
    wbuf_putc(&b, '\'');
    for (const char *p = word; *p; p++) {
        if (*p == '\'') {
            /* Close the quote, add an escaped quote, reopen: ' -> '\'' */
            wbuf_putc(&b, '\'');
            wbuf_putc(&b, '\\');
            wbuf_putc(&b, '\'');
        }
        wbuf_putc(&b, *p);
    }
    wbuf_putc(&b, '\'');
    return b.s;
}

char *words_join_quoted(const struct strvec *sv)
{
    struct strvec q = STRVEC_INIT;
    for (int i = 0; i < sv->n; i++)
        strvec_push_take(&q, words_quote(sv->v[i]));
    char *out = strvec_join(&q, " ");
    strvec_free(&q);
    return out;
}
