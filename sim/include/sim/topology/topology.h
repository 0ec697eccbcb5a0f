/*
 * Simulated pod topologies, the front: IPUs, IPU-Links, IPU-Link domains (ILDs) and GW-Links,
 * built from a preset name (M2000, POD16, POD64, POD128, POD256), from a text file that
 * describes any other, or either with overrides. The built topology and its queries are the
 * container of sim/topology/topology_graph.h. Pure C: no MPI, no threads, no I/O beyond reading the file
 * a caller names.
 *
 * The graph. Nodes 0 .. num_ipus-1 are IPUs; when a topology has more than one ILD, nodes
 * num_ipus .. num_nodes-1 are IPU-Gateways (one per ipus_per_gateway IPUs, i.e. per IPU-M2000).
 * Every cable is full duplex and appears as two directed links, each with its own bandwidth
 * (bytes/s) and latency and its own queue: link 2e carries edge e from its lower-numbered end
 * to its higher, link 2e+1 the other way. Three kinds of link:
 *   - SIM_LINK_IPU: an IPU-Link between two IPUs of one ILD;
 *   - SIM_LINK_GW_ATTACH: the IPU-Link from an IPU to the gateway of its IPU-M2000;
 *   - SIM_LINK_GW: a GW-Link between gateways of two ILDs.
 *
 * Numbering (the ring embedding). Inside every ILD wired as a ladder, IPU i and IPU i+1 (mod
 * the ILD size, numbering inside the ILD) are joined by a direct IPU-Link, so a ring over the
 * IPUs of an ILD in increasing order uses only neighbour links, and every IPU-M2000 holds four
 * consecutive IPUs (4m .. 4m+3, two rungs of the ladder). ILD d holds IPUs d*ild_size ..
 * (d+1)*ild_size-1. The ladder has 2 columns and ild_size/2 rungs; local IPU k sits on rung
 * r = k/2, column c = (r even ? k%2 : 1-k%2) (a snake: up one rung, across, up, across back),
 * with IPU-Links along both columns, across every rung, and from the last rung back to the first
 * on both columns (the torus wrap; omitted for 2 rungs, where it would double a column link).
 *
 * Routes. A route is the path of least total latency, ties broken by fewer hops and then by the
 * lowest-numbered next node, so every route is a fixed, documented function of the topology.
 *
 * GW-Links. When there are several ILDs, every IPU has a SIM_LINK_GW_ATTACH link to its gateway,
 * and gateway m of ILD d is joined to gateway m of the neighbouring ILDs: with 2 ILDs, by all of
 * its gwlinks_per_gateway ports bonded into one link; with 3 or more, the ILDs form a ring and
 * each neighbour gets half of the ports (at least one). Traffic between ILDs therefore runs IPU
 * -> own gateway -> GW-Link(s) -> gateway at the same position -> IPU, plus IPU-Link hops.
 *
 * Presets (numbers and sources in sim/README.md and sim/src/topology/topology.c):
 *   M2000  4 IPUs, 1 ILD, ladder of 2 rungs (a ring of 4)
 *   POD16  16 IPUs, 1 ILD, ladder of 8 rungs with the torus wrap (4 IPU-M2000s)
 *   POD64  64 IPUs, 1 ILD, ladder of 32 rungs with the torus wrap (16 IPU-M2000s)
 *   POD128 2 ILDs of 64 joined by GW-Links (2 bonded 100 Gb/s ports per gateway pair)
 *   POD256 4 ILDs of 64 in a ring of GW-Links (one 100 Gb/s port to each neighbour)
 *
 * Topology file format. Plain text, one setting per line; '#' starts a comment; blank lines are
 * ignored; tokens are separated by spaces or tabs; each key except "link" may appear once.
 *   name NAME                   NAME: 1-63 of [A-Za-z0-9_.-]   (default: the file's base name)
 *   ipus N                      1 .. 1024, required
 *   ild_size N                  IPUs per ILD, divides ipus      (default: ipus)
 *   wiring ladder|ring|full|none  links inside every ILD        (default: ladder when ild_size
 *                               is a multiple of 4, else ring; none for ild_size 1).
 *                               ladder needs ild_size % 4 == 0; full needs ild_size <= 64.
 *   link A B [COUNT]            an extra IPU-Link between IPUs A and B (global ids) of one ILD,
 *                               COUNT (1 .. 16, default 1) links bonded into one edge
 *   ipus_per_gateway N          1 .. 64, divides ild_size when there are several ILDs
 *                               (default 4)
 *   gwlinks_per_gateway N       1 .. 16                          (default 2)
 *   ipulink_bandwidth_gbs X     GB/s (10^9 bytes/s) per direction of one IPU-Link (default 32)
 *   ipulink_latency_ns X        ns per IPU-Link hop                               (default 500)
 *   gwlink_bandwidth_gbs X      GB/s per direction of one GW-Link port          (default 12.5)
 *   gwlink_latency_ns X         ns per GW-Link hop                               (default 3000)
 *   sync_latency_ns X           ns per synchronisation inside an ILD             (default 1000)
 *   gw_sync_latency_ns X        ns added to a synchronisation that spans ILDs    (default 5000)
 *   ipu gc200|bow               the IPU (default gc200; sim/device/device.h)
 *   KEY X                       any cost-model constant of sim/device/params.h (amp_efficiency,
 *                               compute_set_overhead_ns, host_servers, ...), once each
 * X is a decimal with at most 3 fractional digits; bandwidths lie in 0.001 .. 1000000 GB/s,
 * latencies in 0 .. 1000000000 ns. Lines are at most 255 characters; a file has at most 100000
 * lines and 65536 link lines. Any other line is an error that names the file and the line.
 */
#ifndef SIM_TOPOLOGY_H
#define SIM_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include "sim/topology/topology_graph.h"

/* Builds the preset called NAME (case-insensitive). Returns 0, or -EINVAL for an unknown name
 * (with a one-line reason in ERR when ERR is not NULL). */
int sim_topology_preset(const char *name, sim_topology_t **out, char *err, size_t errlen);

/* Parses the topology file at PATH. Returns 0, or a negative errno with a one-line reason naming
 * the file and line in ERR. */
int sim_topology_load(const char *path, sim_topology_t **out, char *err, size_t errlen);

/* A preset name if SPEC is one, else a file path: what GCL_TOPOLOGY and poprun --topology take.
 * Either may be followed by ","-separated KEY=VALUE settings that replace the preset's or the
 * file's values: "POD64,ipulink_latency_ns=700,amp_efficiency=0.5" (any file key but name,
 * ipus, ild_size, wiring and link; sim-step --sensitivity runs its variants this way). */
int sim_topology_open(const char *spec, sim_topology_t **out, char *err, size_t errlen);

/* The smallest preset that holds NUM_IPUS IPUs, or NULL when none does (more than 256). */
/* (Also NULL when NUM_IPUS < 1.) */
const char *sim_topology_smallest_preset(int num_ipus);

#endif /* SIM_TOPOLOGY_H */
