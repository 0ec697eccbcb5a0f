/*
 * The instance wrapper's host set-up; see instance_setup.h.
 */
#include "wrapper/instance_setup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"

int setup_cache_dir(const char *path, char *err, size_t errlen)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = errf(err, errlen, "--executable-cache-path: cannot create %s: %s", p,
                      strerror(errno));
        else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = errf(err, errlen, "--executable-cache-path: %s is not a directory", p);
        *s = c;
        if (rc != 0 || c == '\0')
            break;
    }
    free(p);
    return rc;
}

int setup_in_subnet(unsigned long addr, const char *subnet)
{
    unsigned a, b, c, d, n;
    char tail;
    if (sscanf(subnet, "%3u.%3u.%3u.%3u/%2u%c", &a, &b, &c, &d, &n, &tail) != 5 || a > 255 ||
        b > 255 || c > 255 || d > 255 || n > 32)
        return -1;
    unsigned long net = ((unsigned long)a << 24) | (b << 16) | (c << 8) | d;
    unsigned long mask = n == 0 ? 0 : (0xffffffffUL << (32 - n)) & 0xffffffffUL;
    return (addr & mask) == (net & mask);
}

int setup_subnet_iface(const char *subnet, char *iface, size_t len)
{
    if (!strchr(subnet, '/')) {
        snprintf(iface, len, "%s", subnet);
        return 0;
    }
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return -1;
    int rc = -1;
    for (struct ifaddrs *i = all; i && rc != 0; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        unsigned long addr = ntohl(((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
        if (setup_in_subnet(addr, subnet) == 1) {
            snprintf(iface, len, "%s", i->ifa_name);
            rc = 0;
        }
    }
    freeifaddrs(all);
    return rc;
}
