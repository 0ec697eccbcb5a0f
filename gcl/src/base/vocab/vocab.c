/*
 * GCL's own vocabulary: its method names where we name algorithms, and its JSON option form
 * (GCL_OPTIONS='{"method":"meet_in_middle_ring"}'); see vocab.h.
 *
 * GCL's methods (Poplar's collectives options): auto, clockwise_ring, anticlockwise_ring,
 * bidirectional_ring_pair, meet_in_middle_ring, quad_directional_ring, and broadcast for small
 * tensors. Our all_reduce registry has the first five and broadcast under those names;
 * quad_directional_ring (four quarter-size rings over two mirrored ring patterns) runs as
 * bidirectional_ring_pair, its two-ring counterpart on one ring of IPUs. GCL's reduce_scatter and
 * all_gather take the same methods: every ring method runs as our ring, broadcast as direct.
 */
#include "base/vocab/vocab.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "coll/algo.h"

static const struct {
    coll_collective_t coll;
    const char *gcl, *ours;
} aliases[] = {
    {COLL_ALLREDUCE, "quad_directional_ring", "bidirectional_ring_pair"},
    {COLL_REDUCE_SCATTER, "clockwise_ring", "ring"},
    {COLL_REDUCE_SCATTER, "anticlockwise_ring", "ring"},
    {COLL_REDUCE_SCATTER, "bidirectional_ring_pair", "ring"},
    {COLL_REDUCE_SCATTER, "meet_in_middle_ring", "ring"},
    {COLL_REDUCE_SCATTER, "quad_directional_ring", "ring"},
    {COLL_REDUCE_SCATTER, "broadcast", "direct"},
    {COLL_ALLGATHER, "clockwise_ring", "ring"},
    {COLL_ALLGATHER, "anticlockwise_ring", "ring"},
    {COLL_ALLGATHER, "bidirectional_ring_pair", "ring"},
    {COLL_ALLGATHER, "meet_in_middle_ring", "ring"},
    {COLL_ALLGATHER, "quad_directional_ring", "ring"},
    {COLL_ALLGATHER, "broadcast", "direct"},
};

const char *gcl_algo_resolve(coll_collective_t c, const char *name)
{
    char lower[48];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof lower)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        lower[i] = (char)tolower((unsigned char)name[i]);
    if (strcmp(lower, "auto") == 0)
        return "auto";
    const coll_algo_t *a = coll_algo_find(c, lower);
    if (a)
        return a->name;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (aliases[i].coll == c && strcmp(aliases[i].gcl, lower) == 0)
            return coll_algo_find(c, aliases[i].ours) ? aliases[i].ours : NULL;
    }
    return NULL;
}

/* A small reader of one flat JSON object: "key": string | number | true | false | null. */
typedef struct {
    const char *p;
    char *why;
    size_t wlen;
} json_t;

static int fail(json_t *j, const char *what)
{
    snprintf(j->why, j->wlen, "%s", what);
    return -1;
}

static void skip_ws(json_t *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
        j->p++;
}

/* Reads a string into OUT (at most CAP - 1 bytes; escapes of ASCII only). */
static int read_string(json_t *j, char *out, size_t cap)
{
    size_t n = 0;
    if (*j->p != '"')
        return fail(j, "expected a string");
    for (j->p++; *j->p != '"'; j->p++) {
        char c = *j->p;
        if (c == '\0' || (unsigned char)c < 0x20)
            return fail(j, "an unterminated string");
        if (c == '\\') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *e = strchr(from, *++j->p);
            if (!e || !*j->p)
                return fail(j, "an unknown escape in a string");
            c = to[e - from];
        }
        if (n + 1 >= cap)
            return fail(j, "a string that is too long");
        out[n++] = c;
    }
    j->p++;
    out[n] = '\0';
    return 0;
}

/* Reads a value that is not a string (a number, true, false or null) into OUT as text. */
static int read_scalar(json_t *j, char *out, size_t cap)
{
    size_t n = strspn(j->p, "0123456789+-.eEtruefalsn");
    if (n == 0 || n >= cap)
        return fail(j, *j->p == '{' || *j->p == '[' ? "a nested value (the object is flat)"
                                                    : "expected a value");
    memcpy(out, j->p, n);
    out[n] = '\0';
    j->p += n;
    if (strcmp(out, "true") && strcmp(out, "false") && strcmp(out, "null") &&
        strspn(out, "0123456789+-.eE") != n)
        return fail(j, "expected a value");
    return 0;
}

int gcl_options_json(const char *text, gcl_option_fn fn, void *ctx, char *why, size_t wlen)
{
    json_t j = {text, why, wlen};
    char key[64], value[256];
    skip_ws(&j);
    if (*j.p++ != '{')
        return fail(&j, "expected a JSON object such as {\"method\":\"meet_in_middle_ring\"}");
    skip_ws(&j);
    for (int first = 1; *j.p != '}'; first = 0) {
        if (!first && *j.p++ != ',')
            return fail(&j, "expected ',' or '}'");
        skip_ws(&j);
        if (read_string(&j, key, sizeof key) != 0)
            return -1;
        skip_ws(&j);
        if (*j.p++ != ':')
            return fail(&j, "expected ':' after a key");
        skip_ws(&j);
        int str = *j.p == '"';
        if ((str ? read_string(&j, value, sizeof value) : read_scalar(&j, value, sizeof value)))
            return -1;
        if (fn(ctx, key, value, why, wlen) != 0)
            return -1;
        skip_ws(&j);
    }
    j.p++;
    skip_ws(&j);
    return *j.p ? fail(&j, "text after the object") : 0;
}
