#include "parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int parse_bytes(const char *text, size_t *out)
{
    char *end;
    if (!text || !*text || *text == '-' || *text == '+')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10), mul = 1;
    if (end == text || errno)
        return -1;
    switch (*end) {
    case 'K':
    case 'k':
        mul = 1ull << 10;
        break;
    case 'M':
    case 'm':
        mul = 1ull << 20;
        break;
    case 'G':
    case 'g':
        mul = 1ull << 30;
        break;
    default:
        break;
    }
    if (mul != 1)
        end++;
    if (*end || v > (1ull << 40) / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

int parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    if (!text || !*text)
        return -1;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

char *format_bytes(size_t b, char *buf, size_t len)
{
    if (b >= (1u << 30) && b % (1u << 30) == 0)
        snprintf(buf, len, "%zu GiB", b >> 30);
    else if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%zu KiB", b >> 10);
    else
        snprintf(buf, len, "%zu B", b);
    return buf;
}
