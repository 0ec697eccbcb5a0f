/*
 * What the instance wrapper sets up on its host before it starts the program, for
 * --executable-cache-path and --host-subnet.
 */
#ifndef POPRUN_INSTANCE_SETUP_H
#define POPRUN_INSTANCE_SETUP_H

#include <stddef.h>

/* Creates directory PATH and its parents (mode 0777 before the umask) unless they exist.
 * Returns 0, or -1 with one line in ERR. */
int setup_cache_dir(const char *path, char *err, size_t errlen);

/* Whether the IPv4 address ADDR (host byte order) is in SUBNET ("10.5.0.0/16"); -1 when SUBNET
 * is not an IPv4 subnet. */
int setup_in_subnet(unsigned long addr, const char *subnet);

/* The network interface for --host-subnet SUBNET on this host: SUBNET itself when it names an
 * interface, else the first up interface with an IPv4 address in the subnet. Returns 0 with its
 * name in IFACE, or -1 when none has one. */
int setup_subnet_iface(const char *subnet, char *iface, size_t len);

#endif /* POPRUN_INSTANCE_SETUP_H */
