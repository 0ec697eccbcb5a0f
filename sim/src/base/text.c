/*
 * Text helpers shared by sim/'s sources (text.h).
 */
#include "base/text.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

void sim_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void sim_strlcpy(char *dst, const char *src, size_t len)
{
    size_t n = strlen(src);

    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int sim_read_line(FILE *f, char *buf, size_t max_chars, char *why, size_t whylen)
{
    size_t n = 0;
    int c;

    while ((c = getc(f)) != EOF && c != '\n') {
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
            sim_errf(why, whylen, "invalid byte 0x%02x", c);
            return -EINVAL;
        }
        if (n == max_chars) {
            sim_errf(why, whylen, "line longer than %zu characters", max_chars);
            return -EINVAL;
        }
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    if (c == EOF && ferror(f)) {
        sim_errf(why, whylen, "read error");
        return -EIO;
    }
    return c == EOF && n == 0 ? 0 : 1;
}

void sim_base_name(const char *path, const char *fallback, char *name, size_t len)
{
    const char *base = strrchr(path, '/');
    size_t n;

    base = base ? base + 1 : path;
    n = strcspn(base, ".");
    if (n == 0) {
        sim_strlcpy(name, fallback, len);
        return;
    }
    if (n >= len)
        n = len - 1;
    memcpy(name, base, n);
    name[n] = '\0';
}

FILE *sim_open_text(const char *path, const char *what, int *rc, char *err, size_t errlen)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    struct stat st;

    *rc = f ? 0 : path ? -errno : -EINVAL;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        *rc = -EISDIR;
        fclose(f);
        f = NULL;
    }
    if (!f)
        sim_errf(err, errlen, "cannot open %s '%s': %s", what, path ? path : "(null)",
                 strerror(-*rc));
    return f;
}
