"""What the published runs determine, and what they cannot: scripts/calibrate --identify.

Two questions the fit alone does not answer (docs/validation.md, "What the runs determine"):

1. The PopART cycle. Each round's two BERT-Large runs (4 stages on IPU-POD16, 8 on IPU-POD64)
   are solved alone for two unknowns: published step = k x (the model's step without the host's
   per-cycle cost) + (PopART cycles) x c. k says whether BERT-Large's compute is where ResNet-50's
   amp_efficiency puts it (k = 1); c is the cost per cycle the runs demand, whatever the model's
   host_sync_ns says. The two rounds are solved independently, so their agreement is evidence and
   not a fit; v1.1's third BERT-Large run (IPU-POD128) is then predicted from its round's k and c.

2. The per-round constant. For each round, its constant is swept over its whole range (the
   shared constants at their defaults) and every run of the round simulated at each value; for
   each run, the span of its error over the values at which every other run of its round stays
   within the tolerance. A span wider than the tolerance means the other runs cannot tell the
   prediction of this one: leave-one-out cannot place it, whatever the fit does.

The calibrate module passes itself in (cal): its Sim, configurations and helpers.
"""

SWEEP_POINTS = 9  # log-spaced values of a per-round constant, ends of its range included


def step_ms(cfg, r):
    return cfg["run"]["global_batch"] / r["samples_per_s"] * 1e3


def cycle(sim, cfgs, lines, report):
    """Question 1: k and c of each round's BERT-Large pair."""
    bert = [c for c in cfgs if c["model"] == "bert-large"]
    # The host's per-cycle cost at 0 and at 1 ms: the step grows by 1 ms a cycle charged.
    free = sim.many(bert, {"host_sync_ns": 0})
    per_ms = sim.many(bert, {"host_sync_ns": 1e6})
    rows = {}
    for c, a, b in zip(bert, free, per_ms):
        t0 = step_ms(c, a)
        rows[c["name"]] = {"published_ms": c["run"]["global_batch"] / c["published"] * 1e3,
                           "model_ms": t0, "cycles": step_ms(c, b) - t0}
    lines += ["### The PopART cycle, from each round's BERT-Large pair alone", "",
              "| round | runs solved | k (compute against ResNet-50's) | c (a cycle) | "
              "checked on | predicted | published | error |", "|---|---|---|---|---|---|---|---|"]
    out = {}
    for rnd in sorted({c["round"] for c in bert}):
        pair = sorted((c for c in bert if c["round"] == rnd),
                      key=lambda c: c["run"]["replicas"] * c["run"]["stages"])
        if len(pair) < 2:
            continue
        p, q = rows[pair[0]["name"]], rows[pair[1]["name"]]
        det = p["model_ms"] * q["cycles"] - q["model_ms"] * p["cycles"]
        if det == 0:
            continue
        k = (p["published_ms"] * q["cycles"] - q["published_ms"] * p["cycles"]) / det
        c = (p["model_ms"] * q["published_ms"] - q["model_ms"] * p["published_ms"]) / det
        out[rnd] = {"k": k, "cycle_ms": c, "checked": {}}
        check = ["-", "-", "-", "-"]
        for other in pair[2:]:
            o = rows[other["name"]]
            pred = other["run"]["global_batch"] / ((k * o["model_ms"] + o["cycles"] * c) / 1e3)
            err = pred / other["published"] - 1
            out[rnd]["checked"][other["name"]] = err
            check = [other["pod"], "{:,.0f}".format(pred), "{:,.0f}".format(other["published"]),
                     "%+.1f%%" % (100 * err)]
        lines.append("| %s | %s | %.3f | %.3f ms | %s |" % (
            rnd, " and ".join(x["pod"] for x in pair[:2]), k, c, " | ".join(check)))
    report["cycle"] = out
    lines.append("")


def sweep_values(lo, hi):
    return [lo * (hi / lo) ** (i / (SWEEP_POINTS - 1)) for i in range(SWEEP_POINTS)]


def per_round(cal, sim, cfgs, table, lines, report):
    """Question 2: each round's constant over its range, and what the other runs pin."""
    info = {row["key"]: row for row in table}
    out = {}
    for key in cal.PER_ROUND:
        lo, hi = info[key]["lo"], info[key]["hi"]
        for rnd in sorted({c["round"] for c in cfgs}):
            runs = [c for c in cfgs if c["round"] == rnd]
            values = sweep_values(lo, hi) + [cal.ROUND_CONSTANTS[rnd][key]]
            values = sorted({round(v) for v in values})
            errs = {v: errors(sim, runs, {"%s@%s" % (key, rnd): v}) for v in values}
            lines += ["### %s `%s` over its range" % (rnd, key), "",
                      "| value | " + " | ".join(c["name"].split(" ", 1)[1] for c in runs) + " |",
                      "|---|" + "---|" * len(runs)]
            for v in values:
                mark = " (fitted)" if v == cal.ROUND_CONSTANTS[rnd][key] else ""
                lines.append("| %s%s | %s |" % ("{:,}".format(v), mark,
                                                " | ".join("%+.1f%%" % (100 * e)
                                                           for e in errs[v])))
            lines += ["", "| run | its error where every other run of %s is within %d%% | "
                      "values that allows | determined by the others |" % (
                          rnd, 100 * cal.TOLERANCE), "|---|---|---|---|"]
            for i, c in enumerate(runs):
                ok = [v for v in values if all(abs(e) <= cal.TOLERANCE
                                               for j, e in enumerate(errs[v]) if j != i)]
                span = [errs[v][i] for v in ok]
                row = {"values": [min(ok), max(ok)] if ok else [],
                       "span": [min(span), max(span)] if span else []}
                row["determined"] = bool(span) and max(abs(x) for x in span) <= cal.TOLERANCE
                out["%s %s" % (c["name"], key)] = row
                lines.append("| %s | %s | %s | %s |" % (
                    c["name"],
                    "%+.1f%% to %+.1f%%" % tuple(100 * x for x in row["span"]) if span else
                    "none: no value keeps the others within %d%%" % (100 * cal.TOLERANCE),
                    "%s to %s" % tuple("{:,}".format(v) for v in row["values"]) if ok else "-",
                    "yes" if row["determined"] else "**no**"))
            lines.append("")
    report["per_round"] = out


def errors(sim, runs, constants):
    """Each run's relative error at CONSTANTS."""
    return [r["samples_per_s"] / c["published"] - 1
            for r, c in zip(sim.many(runs, constants), runs)]


def identify(cal, sim, cfgs, table, report):
    """Both questions; returns the markdown lines, and prints them."""
    print("what the runs determine (the defaults; each round's constant swept)", flush=True)
    lines = ["## What the runs determine", ""]
    cycle(sim, cfgs, lines, report)
    per_round(cal, sim, cfgs, table, lines, report)
    for line in lines:
        print("  " + line if line else "", flush=True)
    return lines
