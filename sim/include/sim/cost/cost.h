/*
 * The link cost model: what moving bytes between simulated IPUs costs.
 *
 * One message, alone on the pod (no contention). A message of B bytes from IPU a to IPU b,
 * sent at time s, arrives at
 *
 *     s + latency(route) + ceil(B * 10^12 / bandwidth(route))  picoseconds,
 *
 * where latency(route) is the sum of the per-hop latencies of the links the route crosses and
 * bandwidth(route) is the smallest bandwidth among them (the bytes are pipelined through the
 * hops, cut-through, so only the bottleneck's rate counts). The receiver's clock then becomes
 * max(receiver clock, arrival); that max is the caller's, as are clocks in general.
 *
 * Flows that share links (contention). sim_flows_cost() takes the flows of one step of a
 * schedule and books the links of the topology. Each directed link is a FIFO queue. Flows are
 * served in the order (send_time, src, dst, position in the array), and a flow of B bytes over
 * a route whose bottleneck is W bytes/s
 *   - starts at  start = max(send_time, the time every link of its route becomes free),
 *   - holds every link of its route for  d = ceil(B * 10^12 / W)  from start,
 *   - arrives at start + latency(route) + d.
 * So two equal flows sent together over one shared link arrive exactly d apart. Bookings persist
 * across calls on the same workspace until sim_flow_ws_reset(), so the steps of one collective
 * queue behind each other on a slow link; reset the workspace when a new, independent
 * collective starts. The result is a pure function of the topology and the sequence of calls
 * since the reset: every participant that replays the same steps computes the same times.
 *
 * Ring collectives (closed forms). For a ring over IPUs p[0..n-1] (edge i: p[i] -> p[i+1 mod n])
 * that moves S bytes, every step sends one chunk of c = ceil(S / n) bytes along every edge at
 * once and ends when the slowest edge delivers (as a BSP superstep does):
 *
 *     step = max over edges i of ( latency(route_i) + ceil(c * 10^12 / bandwidth(route_i)) )
 *     all-reduce     = 2(n-1) * step   (reduce-scatter, then all-gather)
 *     reduce-scatter = all-gather = (n-1) * step
 *
 * Inside one ILD wired as a ladder, with p in increasing IPU order, every edge is one IPU-Link
 * (alpha = the IPU-Link latency, B = its bandwidth), and when n divides S and c * 10^12 is a
 * multiple of B this is exactly the textbook alpha-beta time 2(n-1) alpha + 2(n-1)/n * S / B.
 * A ring that crosses ILDs pays, on its crossing edges, the route through the gateways: latency
 * of the GW-Link hop(s) plus the IPU-Link hops to and from the gateways, and the GW-Link's
 * bandwidth as the bottleneck. These forms leave out the synchronisation between steps; an
 * executor that synchronises before each step adds steps * sim_sync_time().
 */
#ifndef SIM_COST_H
#define SIM_COST_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"
#include "sim/topology/topology.h"

/* latency(R) + ceil(BYTES * 10^12 / bandwidth(R)); 0 for an empty route (src == dst). */
sim_time_t sim_route_time(const sim_route_t *r, uint64_t bytes);

/* The time from send to arrival of one message of BYTES from IPU SRC to IPU DST, without
 * contention. Returns 0, or -EINVAL when an IPU is out of range. */
int sim_message_time(const sim_topology_t *t, int src, int dst, uint64_t bytes, sim_time_t *out);

typedef struct sim_flow {
    int src, dst;         /* in: global IPU ids */
    uint64_t bytes;       /* in */
    sim_time_t send_time; /* in: the sender's clock when it posts the send */
    sim_time_t start;     /* out: when the flow had every link of its route */
    sim_time_t arrival;   /* out: when its last byte reaches dst */
} sim_flow_t;

/* Link bookings and scratch space for sim_flows_cost(); one per concurrent user (not locked). */
typedef struct sim_flow_ws sim_flow_ws_t;

/* Creates a workspace for topology T (which must outlive it), sized for MAX_FLOWS flows per
 * call (it grows if a call has more). Returns 0, -EINVAL, or -ENOMEM. */
int sim_flow_ws_create(const sim_topology_t *t, size_t max_flows, sim_flow_ws_t **out);

/* Frees every link: the next call starts on an idle pod. O(1). */
void sim_flow_ws_reset(sim_flow_ws_t *ws);

void sim_flow_ws_destroy(sim_flow_ws_t *ws);

/* Costs the N flows of one step (see the top of this header) and fills their start and arrival.
 * A flow with src == dst arrives at its send time and books nothing. O(N log N + N * hops), no
 * allocation unless N exceeds every earlier N. Returns 0; -EINVAL when a flow names an IPU out
 * of range (then no flow is costed and no link booked); -ENOMEM when growing failed. */
int sim_flows_cost(sim_flow_ws_t *ws, sim_flow_t *flows, size_t n);

/* The closed form of a ring collective over IPUS[0..N-1] (see the top of this header). */
typedef struct sim_ring_cost {
    int steps;        /* 2(n-1) for all-reduce, n-1 for reduce-scatter and all-gather */
    uint64_t chunk;   /* ceil(bytes / n): bytes per edge per step */
    sim_time_t step;  /* time of one step: alpha + beta of the slowest edge */
    sim_time_t alpha; /* latency of the slowest edge's route */
    sim_time_t beta;  /* ceil(chunk * 10^12 / bandwidth) on the slowest edge */
    int slowest_edge; /* i such that ipus[i] -> ipus[i+1 mod n] is the slowest (lowest i) */
    int gw_edges;     /* edges whose route crosses a GW-Link */
    sim_time_t total; /* steps * step, saturating */
} sim_ring_cost_t;

/* Ring all-reduce of BYTES over IPUS[0..N-1]. N == 1 costs nothing. Returns 0, or -EINVAL for
 * N < 1 or an IPU out of range. */
int sim_ring_allreduce_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes,
                            sim_ring_cost_t *out);
/* Ring reduce-scatter of a BYTES input, and ring all-gather of a BYTES output: n-1 steps. */
int sim_ring_reduce_scatter_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes,
                                 sim_ring_cost_t *out);
int sim_ring_all_gather_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes,
                             sim_ring_cost_t *out);

/* Shorthand: the total of sim_ring_allreduce_cost(), or SIM_TIME_MAX on invalid arguments. */
sim_time_t sim_ring_allreduce_time(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes);

/* The cost of one synchronisation of IPUS[0..N-1]: 0 for N <= 1, the topology's sync latency
 * when all lie in one ILD, plus its GW sync latency when they span ILDs. Returns 0, or -EINVAL
 * for N < 0 or an IPU out of range. */
int sim_sync_time(const sim_topology_t *t, const int *ipus, int n, sim_time_t *out);

#endif /* SIM_COST_H */
