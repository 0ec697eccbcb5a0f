"""The report of scripts/bench-collectives --peers: summary.md and one plot per rank count.

Ratios are busbw ours / peer's (higher is better for us) for bandwidth and time ours / peer's
(lower is better for us) for latency, every pair measured in the same invocation.
"""
import os
import subprocess

MIB = 1 << 20


def size_name(b):
    if b < 1024:
        return "%d B" % b
    if b < MIB:
        return "%g KiB" % (b / 1024)
    return "%g MiB" % (b / MIB)


def peer_name(r):
    return {"openmpi": "OpenMPI", "mpich": "MPICH", "gcl": "ours"}.get(
        r["impl"], "Gloo " + r["algo"] if r["impl"] == "gloo" else r["impl"])


def select(rows, **kw):
    return [r for r in rows if all(str(r[k]) == str(v) for k, v in kw.items())]


def fnum(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return 0.0


def loads(rows):
    v = sorted(float(r["load1"]) for r in rows if r.get("load1"))
    return "%.1f-%.1f" % (v[0], v[-1]) if v else "-"


def bandwidth_tables(f, rows, cores, pass_name):
    bw = select(rows, mode="bandwidth", collective="all_reduce", layout_kind="local",
                **{"pass": pass_name})
    ranks = sorted({int(r["ranks"]) for r in bw})
    if not ranks:
        return {}
    sizes = sorted({int(r["size_bytes"]) for r in bw})
    f.write("\n### all_reduce busbw on one host, %s machine (load average %s)\n\n" % (
        pass_name, loads(bw)))
    f.write("busbw in GB/s, ours / the best peer at that size (its name) = ratio; `*`: a "
            "row whose 5 batches spread more than 5%.\n\n")
    head = ["size"] + ["%d ranks%s" % (n, " (more ranks than the %d cores)" % cores
                                       if n > cores else "") for n in ranks]
    f.write("| " + " | ".join(head) + " |\n" + "|---" * len(head) + "|\n")
    worst = {}
    for s in sizes:
        cells = [size_name(s)]
        for n in ranks:
            here = select(bw, ranks=n, size_bytes=s)
            ours = [r for r in here if r["impl"] == "gcl"]
            peers = [r for r in here if r["impl"] != "gcl" and fnum(r, "busbw_gbs") > 0]
            if not ours or not peers:
                cells.append("-")
                continue
            o = ours[0]
            best = max(peers, key=lambda r: fnum(r, "busbw_gbs"))
            ratio = fnum(o, "busbw_gbs") / fnum(best, "busbw_gbs")
            flag = "*" if fnum(o, "spread") > 0.05 or fnum(best, "spread") > 0.05 else ""
            cells.append("%.2f / %.2f (%s) = **%.2fx**%s" % (
                fnum(o, "busbw_gbs"), fnum(best, "busbw_gbs"), peer_name(best), ratio, flag))
            key = (n, "from 1 MiB" if s >= MIB else "4 KiB-256 KiB")
            if key not in worst or ratio < worst[key][0]:
                worst[key] = (ratio, s, peer_name(best))
        f.write("| " + " | ".join(cells) + " |\n")
    # Each peer on its own.
    impls = sorted({(r["impl"], r["algo"]) for r in bw if r["impl"] != "gcl"})
    for n in ranks:
        f.write("\nours / each peer, %d ranks (%s): busbw ratio\n\n" % (n, pass_name))
        head = ["size", "ours (GB/s)"] + [peer_name({"impl": i, "algo": a}) for i, a in impls]
        f.write("| " + " | ".join(head) + " |\n" + "|---" * len(head) + "|\n")
        for s in sizes:
            here = select(bw, ranks=n, size_bytes=s)
            ours = [r for r in here if r["impl"] == "gcl"]
            if not ours:
                continue
            cells = [size_name(s), "%.2f" % fnum(ours[0], "busbw_gbs")]
            for i, a in impls:
                p = [r for r in here if r["impl"] == i and r["algo"] == a]
                cells.append("%.2fx" % (fnum(ours[0], "busbw_gbs") / fnum(p[0], "busbw_gbs"))
                             if p and fnum(p[0], "busbw_gbs") > 0 else "-")
            f.write("| " + " | ".join(cells) + " |\n")
    return worst


def latency_tables(f, rows, cores, pass_name):
    lat = select(rows, mode="latency", layout_kind="local", **{"pass": pass_name})
    if not lat:
        return
    f.write("\n### Latency on one host, %s machine (load average %s)\n\n" % (pass_name,
                                                                              loads(lat)))
    f.write("Median / p99 of single calls (µs), each followed by a barrier outside the timing; "
            "ratio: our median / OpenMPI's (at most 1 is the goal).\n\n")
    impls = sorted({(r["impl"], r["algo"]) for r in lat if r["impl"] != "gcl"})
    names = []
    for i, a in impls:
        n = peer_name({"impl": i, "algo": a})
        if n not in names:
            names.append(n)
    head = ["ranks", "collective", "size", "ours"] + names + ["ours / OpenMPI"]
    f.write("| " + " | ".join(head) + " |\n" + "|---" * len(head) + "|\n")
    for n in sorted({int(r["ranks"]) for r in lat}):
        for coll in ("all_reduce", "broadcast", "barrier"):
            sizes = sorted({int(r["size_bytes"]) for r in select(lat, ranks=n, collective=coll)})
            if coll == "barrier":  # no data: one row of size 0
                sizes = sizes[:1]
            for s in sizes:
                here = select(lat, ranks=n, collective=coll, **(
                    {} if coll == "barrier" else {"size_bytes": s}))
                ours = [r for r in here if r["impl"] == "gcl"]
                cells = ["%d%s" % (n, "*" if n > cores else ""), coll,
                         size_name(s) if coll != "barrier" else "-",
                         "%.2f / %.2f" % (fnum(ours[0], "time_us"), fnum(ours[0], "p99_us"))
                         if ours else "-"]
                ompi = None
                for nm in names:
                    p = [r for r in here if peer_name(r) == nm]
                    cells.append("%.2f / %.2f" % (fnum(p[0], "time_us"), fnum(p[0], "p99_us"))
                                 if p else "-")
                    if nm == "OpenMPI" and p:
                        ompi = p[0]
                cells.append("**%.2fx**" % (fnum(ours[0], "time_us") / fnum(ompi, "time_us"))
                             if ours and ompi and fnum(ompi, "time_us") > 0 else "-")
                f.write("| " + " | ".join(cells) + " |\n")
    f.write("\n`*`: more ranks than the %d cores.\n" % cores)


def netns_tables(f, rows, pass_name):
    net = select(rows, layout_kind="netns", **{"pass": pass_name})
    if not net:
        return
    bw = select(net, mode="bandwidth")
    layouts = sorted({r["layout"] for r in bw}, key=lambda l: [int(x) for x in l.split("x")])
    f.write("\n### all_reduce across namespace hosts (TCP through a bridge), %s machine "
            "(load average %s)\n\n" % (pass_name, loads(net)))
    f.write("busbw ours / OpenMPI's in its own job (GB/s) = ratio\n\n")
    head = ["size"] + ["%s hosts x %s" % tuple(l.split("x")) for l in layouts]
    f.write("| " + " | ".join(head) + " |\n" + "|---" * len(head) + "|\n")
    for s in sorted({int(r["size_bytes"]) for r in bw}):
        cells = [size_name(s)]
        for l in layouts:
            o = select(bw, layout=l, size_bytes=s, impl="gcl")
            p = select(bw, layout=l, size_bytes=s, impl="openmpi")
            if o and p and fnum(p[0], "busbw_gbs") > 0:
                cells.append("%.3f / %.3f = **%.2fx**" % (
                    fnum(o[0], "busbw_gbs"), fnum(p[0], "busbw_gbs"),
                    fnum(o[0], "busbw_gbs") / fnum(p[0], "busbw_gbs")))
            else:
                cells.append("-")
        f.write("| " + " | ".join(cells) + " |\n")
    lat = select(net, mode="latency")
    if lat:
        f.write("\nLatency across namespace hosts, median / p99 (µs); ratio our median / "
                "OpenMPI's (at most 2 is the goal)\n\n| layout | collective | size | ours | "
                "OpenMPI | ratio |\n|---|---|---|---|---|---|\n")
        for l in sorted({r["layout"] for r in lat}):
            for coll in ("all_reduce", "broadcast"):
                for s in sorted({int(r["size_bytes"]) for r in select(lat, collective=coll)}):
                    o = select(lat, layout=l, collective=coll, size_bytes=s, impl="gcl")
                    p = select(lat, layout=l, collective=coll, size_bytes=s, impl="openmpi")
                    if not o or not p:
                        continue
                    f.write("| %s | %s | %s | %.1f / %.1f | %.1f / %.1f | **%.2fx** |\n" % (
                        l, coll, size_name(s), fnum(o[0], "time_us"), fnum(o[0], "p99_us"),
                        fnum(p[0], "time_us"), fnum(p[0], "p99_us"),
                        fnum(o[0], "time_us") / max(fnum(p[0], "time_us"), 1e-9)))


def figures(f, worst_by_pass, cores):
    if not worst_by_pass:
        return
    f.write("\n### In short: our all_reduce busbw over the best peer's, the lowest ratio of each "
            "range\n\n| ranks on one host | sizes | quiet machine | loaded machine |\n"
            "|---|---|---|---|\n")
    keys = sorted({k for w in worst_by_pass.values() for k in w})
    for k in keys:
        cells = []
        for p in ("quiet", "loaded"):
            w = worst_by_pass.get(p, {}).get(k)
            cells.append("%.2fx (at %s, %s)" % (w[0], size_name(w[1]), w[2]) if w else "-")
        f.write("| %d%s | %s | %s | %s |\n" % (k[0], " (more ranks than cores)"
                                              if k[0] > cores else "", k[1], cells[0], cells[1]))


def plots(out, rows):
    bw = select(rows, mode="bandwidth", collective="all_reduce", layout_kind="local",
                **{"pass": "quiet"})
    for n in sorted({int(r["ranks"]) for r in bw}):
        impls = sorted({(r["impl"], r["algo"]) for r in select(bw, ranks=n)},
                       key=lambda x: (x[0] != "gcl", x))
        parts = []
        for i, a in impls:
            d = os.path.join(out, "raw", "plot-%d-%s-%s.dat" % (n, i, a))
            with open(d, "w") as fh:
                for r in sorted(select(bw, ranks=n, impl=i, algo=a),
                                key=lambda r: int(r["size_bytes"])):
                    fh.write("%s %s\n" % (r["size_bytes"], r["busbw_gbs"]))
            title = "gcl (ours)" if i == "gcl" else peer_name({"impl": i, "algo": a})
            parts.append("'%s' using 1:2 with linespoints%s title '%s'" % (
                d, " lw 2" if i == "gcl" else " dashtype 2", title))
        png = os.path.join(out, "all_reduce-peers-%d.png" % n)
        cmd = ("set terminal pngcairo noenhanced size 900,560 font ',10'; set output '%s'; "
               "set format x '%%.0b%%BB'; set title 'all_reduce busbw, %d ranks on one host "
               "(%d cores): libgcl and its CPU peers, each in its own job'; set logscale x 2; "
               "set xlabel 'bytes per rank'; set ylabel 'busbw (GB/s)'; set key left top; "
               "set grid; plot %s" % (png, n, os.cpu_count() or 1, ", ".join(parts)))
        if subprocess.call(["gnuplot", "-e", cmd]) != 0:
            print("bench-collectives: gnuplot failed for %s" % png)


def wire_table(f, wire):
    if not wire:
        return
    f.write("\n### Where the time goes across hosts at 16 MiB\n\n")
    f.write("veth link, plain TCP socket pair between two namespace hosts: %.2f GB/s one way, "
            "%.2f GB/s each way with both directions at once.\n\n" % (
                wire["link_one_way"], wire["link_both"]))
    f.write("| layout | runtime | time per call (µs) | bytes sent per host per payload byte | "
            "the algorithm's bound | wire rate per host (GB/s) | time at the link's rate (µs) "
            "| retransmitted (% of bytes sent) |\n|---|---|---|---|---|---|---|---|\n")
    for w in wire["rows"]:
        f.write("| %s | %s | %.0f | %.3f | %.3f | %.2f | %.0f | %.1f |\n" % (
            w["layout"], w["impl"], w["time_us"], w["per_byte"], w["bound"], w["rate"],
            w["link_time_us"], 100 * w.get("retrans_share", 0.0)))
    f.write("\nBytes sent count each call's data once: TCP's retransmissions (segments that "
            "arrived out of order between namespaces and were sent again) are taken out and "
            "shown in the last column.\n")


def report(out, rows, cores, wire, command):
    for r in rows:
        r["layout_kind"] = "local" if r["layout"].startswith("1x") else "netns"
    worst = {}
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("# all_reduce: libgcl against its CPU peers, each in its own job\n\n")
        f.write("Command: `%s`. %d cores. Every figure of a table comes from this one "
                "invocation; each job's load average at its start is in results.csv.\n" % (
                    command, cores))
        for p in ("quiet", "loaded"):
            w = bandwidth_tables(f, rows, cores, p)
            if w:
                worst[p] = w
        figures(f, worst, cores)
        for p in ("quiet", "loaded"):
            latency_tables(f, rows, cores, p)
        for p in ("quiet", "loaded"):
            netns_tables(f, rows, p)
        wire_table(f, wire)
        wrong = [r for r in rows if r.get("wrong") not in ("0", 0, None, "")]
        if wrong:
            f.write("\n**Wrong results**: %d rows (%s)\n" % (
                len(wrong), ", ".join(sorted({peer_name(r) for r in wrong}))))
    plots(out, rows)
