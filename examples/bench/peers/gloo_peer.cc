/*
 * gloo-peer: Gloo's all-reduce as its users run it, for the comparison: one process per rank,
 * Gloo's own rendezvous (a FileStore in a directory every rank sees, with a prefix per job, as
 * Gloo's example1.cc does), the tcp transport over loopback (or GLOO_HOSTNAME), and Gloo's
 * algorithm objects built once per size and run again and again. Algorithms:
 * allreduce_ring_chunked (gloo::AllreduceRingChunked), allreduce_bcube (gloo::AllreduceBcube);
 * broadcast: gloo::BroadcastOneToAll. In place (Gloo's form), f32 sum. Timing rule and output
 * are gcl-bench's (../rule.h, peer.h).
 *
 *   for r in 0 1 2 3; do RANK=$r SIZE=4 PREFIX=job1 GLOO_STORE=/tmp/store \
 *       build/bin/gloo-peer all_reduce -a ring_chunked & done; wait
 *
 * Environment: RANK, SIZE, PREFIX (as example1.cc), GLOO_STORE (the FileStore's directory),
 * GLOO_HOSTNAME (the address to listen on; default 127.0.0.1), GLOO_TIMEOUT_S (default 600).
 */
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "peer.h"

namespace {

using Ctx = std::shared_ptr<gloo::Context>;
using clk = std::chrono::steady_clock;

// Where this rank is, for the message of a Gloo exception: "size 4096: agreeing".
char phase[96] = "connecting";

double now_s()
{
    return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

struct Size {
    const peer_opts_t *o;
    Ctx ctx;
    std::vector<float> buf;
    std::unique_ptr<gloo::Algorithm> algo;
    std::unique_ptr<gloo::BarrierAllToAll> barrier;
    std::unique_ptr<gloo::AllreduceRing<double>> slowest; // the batch time's max over ranks
    double t = 0;
};

std::unique_ptr<gloo::Algorithm> make_algo(const peer_opts_t *o, const Ctx &ctx, float *p,
                                           int count)
{
    std::vector<float *> ptrs{p};
    if (!std::strcmp(o->collective, "broadcast"))
        return std::unique_ptr<gloo::Algorithm>(new gloo::BroadcastOneToAll<float>(ctx, ptrs,
                                                                                   count, 0));
    if (!std::strcmp(o->algo, "bcube"))
        return std::unique_ptr<gloo::Algorithm>(new gloo::AllreduceBcube<float>(ctx, ptrs, count));
    return std::unique_ptr<gloo::Algorithm>(new gloo::AllreduceRingChunked<float>(ctx, ptrs,
                                                                                  count));
}

double batch(void *arg, long n)
{
    auto *s = static_cast<Size *>(arg);
    s->barrier->run();
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        s->algo->run();
    s->t = now_s() - t0;
    s->slowest->run();
    return s->t;
}

void latency(Size &s, peer_row_t &row)
{
    long n = s.o->samples;
    std::vector<double> mine(static_cast<size_t>(n));
    for (long i = 0; i < s.o->rule.warmup; i++) {
        s.algo->run();
        s.barrier->run();
    }
    for (long i = 0; i < n; i++) {
        double t0 = now_s();
        s.algo->run();
        mine[static_cast<size_t>(i)] = (now_s() - t0) * 1e6;
        s.barrier->run();
    }
    gloo::AllreduceRing<double> sum(s.ctx, {mine.data()}, static_cast<int>(n));
    sum.run();
    for (auto &v : mine)
        v /= s.ctx->size;
    rule_percentiles(mine.data(), n, &row.p50_us, &row.p99_us);
    row.samples = n;
}

unsigned long long check(Size &s, int count)
{
    int rank = s.ctx->rank, n = s.ctx->size;
    bool bcast = !std::strcmp(s.o->collective, "broadcast");
    for (int i = 0; i < count; i++)
        s.buf[static_cast<size_t>(i)] = bcast && rank ? -1.0f : peer_fill(rank, static_cast<size_t>(i));
    s.algo->run();
    double bad = 0;
    for (int i = 0; i < count; i++)
        bad += s.buf[static_cast<size_t>(i)] !=
               (bcast ? peer_fill(0, static_cast<size_t>(i)) : peer_sum(n, static_cast<size_t>(i)));
    gloo::AllreduceRing<double> sum(s.ctx, {&bad}, 1);
    sum.run();
    return static_cast<unsigned long long>(bad);
}

int run_sizes(const peer_opts_t *o, const Ctx &ctx)
{
    Size s;
    s.o = o;
    s.ctx = ctx;
    s.barrier.reset(new gloo::BarrierAllToAll(ctx));
    s.slowest.reset(new gloo::AllreduceRing<double>(ctx, {&s.t}, 1,
                                                    gloo::ReductionFunction<double>::max));
    size_t max = 0;
    for (int i = 0; i < o->nsizes; i++)
        max = o->sizes[i] > max ? o->sizes[i] : max;
    s.buf.assign(max / 4 + 1, 0.0f);
    int bad = 0;
    for (int i = 0; i < o->nsizes && !bad; i++) {
        peer_row_t row{};
        row.bytes = o->sizes[i];
        int count = static_cast<int>(o->sizes[i] / 4);
        std::fill(s.buf.begin(), s.buf.end(), 0.0f); // in place: zeros stay zeros
        s.algo = make_algo(o, ctx, s.buf.data(), count);
        std::snprintf(phase, sizeof phase, "size %zu: timing", o->sizes[i]);
        if (o->latency)
            latency(s, row);
        else if (rule_time(&o->rule, batch, &s, &row.r) != 0)
            return 1;
        if (o->check)
            row.wrong = check(s, count);
        if (ctx->rank == 0 && peer_row(o, "gloo", ctx->size, 1, &row) != 0)
            bad = 1;
        bad |= row.wrong != 0;
        std::snprintf(phase, sizeof phase, "size %zu: agreeing", o->sizes[i]);
        double any = bad; // every rank stops together
        gloo::AllreduceRing<double> agree(ctx, {&any}, 1, gloo::ReductionFunction<double>::max);
        agree.run();
        bad = any != 0;
        s.algo.reset();
    }
    std::snprintf(phase, sizeof phase, "after the last size");
    return bad;
}

int env_int(const char *name, int dflt)
{
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : dflt;
}

/*
 * No rank closes its sockets while another still waits on one: each says it is done in the
 * store, out of band, and leaves when all have. Without this, the rank still in its last
 * call could read its final message and the finished peer's end-of-file in one pass of Gloo's
 * event loop; Gloo's tcp Buffer::waitRecv looks for an exception before it looks for the
 * completion, so it throws "Connection closed by peer" though the message arrived (3 jobs in
 * about 700 on a loaded machine; bench_peers_quick failed so in CI).
 */
void leave_together(gloo::rendezvous::Store &store, int rank, int size)
{
    store.set("done/" + std::to_string(rank), std::vector<char>(1, 1));
    std::vector<std::string> keys;
    for (int r = 0; r < size; r++)
        keys.push_back("done/" + std::to_string(r));
    store.wait(keys, std::chrono::seconds(env_int("GLOO_TIMEOUT_S", 600)));
}

} // namespace

int main(int argc, char **argv)
{
    static const char *const algos[] = {"ring_chunked", "bcube", nullptr};
    peer_opts_t o;
    int prc = peer_parse(argc, argv, "gloo-peer", algos, &o);
    if (prc)
        return prc == 1 ? 0 : 2;
    if (!std::strcmp(o.collective, "barrier")) {
        std::fprintf(stderr, "gloo-peer: barrier: not measured for Gloo (all_reduce or broadcast)\n");
        return 2;
    }
    if (!std::strcmp(o.collective, "broadcast"))
        o.algo = "broadcast_one_to_all";
    const char *store_dir = std::getenv("GLOO_STORE"), *prefix = std::getenv("PREFIX");
    int rank = env_int("RANK", -1), size = env_int("SIZE", -1);
    if (!store_dir || !prefix || rank < 0 || size < 1 || rank >= size) {
        std::fprintf(stderr, "gloo-peer: set RANK, SIZE, PREFIX and GLOO_STORE (Gloo's "
                             "FileStore rendezvous); scripts/bench-collectives does\n");
        return 2;
    }
    // A write to a peer that has gone is an error Gloo reports, not a silent death by SIGPIPE
    // (Gloo writes with writev; Python, torch.distributed's host, ignores SIGPIPE the same way).
    std::signal(SIGPIPE, SIG_IGN);
    try {
        gloo::transport::tcp::attr attr;
        const char *host = std::getenv("GLOO_HOSTNAME");
        attr.hostname = host && *host ? host : "127.0.0.1";
        auto dev = gloo::transport::tcp::CreateDevice(attr);
        gloo::rendezvous::FileStore files(store_dir);
        gloo::rendezvous::PrefixStore store(prefix, files);
        auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
        ctx->setTimeout(std::chrono::seconds(env_int("GLOO_TIMEOUT_S", 600)));
        ctx->connectFullMesh(store, dev);
        if (rank == 0)
            peer_header(&o, "gloo", size, 1);
        std::snprintf(phase, sizeof phase, "connected");
        int rc = run_sizes(&o, ctx);
        std::snprintf(phase, sizeof phase, "leaving");
        leave_together(store, rank, size);
        return rc;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gloo-peer: rank %d (%s): %s\n", rank, phase, e.what());
        return 1;
    }
}
