/* Replica-group arithmetic; see coll/group.h for the layouts. */
#include "coll/group.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int coll_group_check(coll_group_t group, int nreplicas, const char **why)
{
    const char *reason = NULL;
    if (nreplicas < 1)
        reason = "the job has no replicas";
    else if (group.kind == COLL_GROUP_ALL)
        reason = NULL;
    else if (group.kind != COLL_GROUP_CONSECUTIVE && group.kind != COLL_GROUP_ORTHOGONAL)
        reason = "unknown replica group kind";
    else if (group.size < 1)
        reason = "the replica group size must be at least 1";
    else if (group.size > nreplicas)
        reason = "the replica group is larger than the number of replicas";
    else if (nreplicas % group.size != 0)
        reason = "the replica group size must divide the number of replicas";
    if (why)
        *why = reason;
    return reason ? -1 : 0;
}

int coll_group_size(coll_group_t group, int nreplicas)
{
    return group.kind == COLL_GROUP_ALL ? nreplicas : group.size;
}

int coll_group_index(coll_group_t group, int nreplicas, int replica)
{
    switch (group.kind) {
    case COLL_GROUP_CONSECUTIVE:
        return replica / group.size;
    case COLL_GROUP_ORTHOGONAL:
        return replica % (nreplicas / group.size);
    default:
        return 0;
    }
}

int coll_group_rank(coll_group_t group, int nreplicas, int replica)
{
    switch (group.kind) {
    case COLL_GROUP_CONSECUTIVE:
        return replica % group.size;
    case COLL_GROUP_ORTHOGONAL:
        return replica / (nreplicas / group.size);
    default:
        return replica;
    }
}

int coll_group_member(coll_group_t group, int nreplicas, int replica, int rank)
{
    switch (group.kind) {
    case COLL_GROUP_CONSECUTIVE:
        return (replica / group.size) * group.size + rank;
    case COLL_GROUP_ORTHOGONAL: {
        int stride = nreplicas / group.size;
        return replica % stride + rank * stride;
    }
    default:
        return rank;
    }
}

static int parse_size(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < 1 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int coll_group_parse(const char *text, coll_group_t *out)
{
    if (!text)
        return -1;
    if (strcmp(text, "all") == 0) {
        *out = (coll_group_t){COLL_GROUP_ALL, 0};
        return 0;
    }
    static const struct {
        const char *prefix;
        coll_group_kind_t kind;
    } kinds[] = {{"consecutive:", COLL_GROUP_CONSECUTIVE}, {"orthogonal:", COLL_GROUP_ORTHOGONAL}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i].prefix);
        int size;
        if (strncmp(text, kinds[i].prefix, n) == 0 && parse_size(text + n, &size) == 0) {
            *out = (coll_group_t){kinds[i].kind, size};
            return 0;
        }
    }
    return -1;
}

char *coll_group_format(coll_group_t group, char *buf, unsigned len)
{
    switch (group.kind) {
    case COLL_GROUP_CONSECUTIVE:
        snprintf(buf, len, "consecutive:%d", group.size);
        break;
    case COLL_GROUP_ORTHOGONAL:
        snprintf(buf, len, "orthogonal:%d", group.size);
        break;
    default:
        snprintf(buf, len, "all");
        break;
    }
    return buf;
}
