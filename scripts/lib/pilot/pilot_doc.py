"""The text of the pilot report (scripts/pilot-report): blocks for pilot_figures.to_markdown and
to_html. Every number it states is registered with P.fig, with its kind and the run it comes
from, so that the last table lists each figure with the command that produced it."""
from pilot_figures import DERIVED, PLAN, PODS, PREDICTION, REAL, SIM, fmt_n, fmt_s, num

WHAT = {
    "gcl": "the candidate: libgcl over simulated IPUs, real training here, simulated time on POD16",
    "mpi": "the baseline: the same training with MPI_Allreduce, one replica per rank",
    "restart": "gcl with checkpoints under poprun --max-restarts 1; one instance killed with SIGKILL",
    "elastic": "gcl under poprun --elastic --max-restarts 1; one instance killed with SIGKILL, the "
               "others go on with fewer replicas and the replacement joins back",
}


def what(name):
    """What run NAME is: the table of runs' words for it."""
    if name in WHAT:
        return WHAT[name]
    kind, _, pod = name.partition("-")
    if kind == "sim":
        return ("sim-step's prediction for %s: train's model from a model file, the global batch "
                "split over the replicas (phantom, simulated only)" % pod)
    if kind == "plan":
        return ("sim-step --plan's plan for %s: the best ways it found to run the same model "
                "file there, each simulated in full (phantom, simulated only)" % pod)
    return name


def pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def header(P):
    c = P.cfg
    opts = " --quick" if c.get("quick") == "1" else ""
    opts += " --epochs %s --target-accuracy %s" % (c.get("epochs", "?"), c.get("target_accuracy"))
    for k in ("pod_cost_per_hour", "baseline_cost_per_hour"):
        if c.get(k):
            opts += " --%s %s" % (k.replace("_", "-"), c[k])
    extra = (" with PILOT_TRAIN_ARGS=\"%s\"" % c["train_extra_args"]) if c.get("train_extra_args") else ""
    mem = "%.1f GB" % (int(c["memory_kb"]) / 1e6) if c.get("memory_kb", "").isdigit() else "?"
    model = c.get("model", "mlp")
    opts = " --model %s%s" % (model, opts)
    return [
        ("h1", "Pilot report: train's %s on Fashion-MNIST, gcl on a simulated IPU pod against an "
               "MPI baseline" % model.upper()),
        ("p", "`scripts/pilot%s`%s, %s, on %s (%s cores, %s, %s of memory), commit %s." % (
            opts, extra, c.get("date", "?"), c.get("host", "?"), c.get("nproc", "?"),
            c.get("cpu", "?"), mem, c.get("commit", "?"))),
        ("p", "Every figure says what it is. **Real**: measured on this host in this invocation, "
              "by the wall clock, on a machine that other jobs may share (the load average before "
              "each run is in the table of runs). **Simulated**: the cost model of GC200 pods "
              "(docs/validation.md): train's own simulated clocks on POD16 (**simulated**), "
              "sim-step's prediction for a pod of the job laid out as the pilot lays it out "
              "(**simulated: a prediction**), or the best way sim-step --plan found to run it "
              "on a pod, which nothing here ran (**simulated: a plan**); simulated figures are "
              "the same on any machine. A ratio is "
              "formed only from runs of this invocation, and one between a real and a simulated "
              "figure says so."),
    ]


def runs_table(P):
    rows = []
    for name, r in P.runs.items():
        st = r.state()
        if r.status not in (None, 0) and r.log_tail:
            st += ": " + " / ".join(line[:200] for line in r.log_tail[-2:])
        rows.append((name, what(name), st if r.status == 0 else "**%s**" % st,
                     fmt_s(r.wall_s), r.load, "`%s`" % r.cmd if r.cmd else "-"))
    return [("h2", "The runs"),
            ("table", ("run", "what", "status", "wall time (real)", "load average before",
                       "command"), rows)]


def summary(P):
    g, m = P.runs["gcl"], P.runs["mpi"]
    items = []
    ok = sum(1 for r in P.runs.values() if r.status == 0)
    bad = [n for n, r in P.runs.items() if r.status != 0]
    items.append("%d of %d runs succeeded%s." % (ok, len(P.runs), "" if not bad else
                                                  "; **not: %s**" % ", ".join(
                                                      "%s (%s)" % (n, P.runs[n].state()) for n in bad)))
    if g.ok() and m.ok():
        ga, ma = g.json["test_accuracy"], m.json["test_accuracy"]
        P.fig("test accuracy, gcl", "%.4f" % ga, REAL, "gcl")
        P.fig("test accuracy, MPI baseline", "%.4f" % ma, REAL, "mpi")
        d = 100 * abs(ga - ma)
        items.append("Test accuracy (real): gcl %.2f%%, MPI baseline %.2f%%: %.2f points apart (%s "
                     "0.3)." % (100 * ga, 100 * ma, d, "within" if d <= 0.3 else "**more than**"))
        if P.cmp:
            items.append("Final weights, gcl against the baseline: `%s`." % P.cmp)
        gt, mt = g.json["samples_per_s"], m.json["samples_per_s"]
        P.fig("throughput ratio gcl / MPI baseline (real / real)", "%.2f" % (gt / mt), DERIVED,
              "gcl, mpi")
        items.append("Throughput on this host (real): gcl %s, MPI baseline %s samples/s; gcl / "
                     "baseline = %.2f." % (fmt_n(gt), fmt_n(mt), gt / mt))
        if P.sim_step_s():
            st = g.json["sim_samples_per_s"]
            P.fig("simulated POD16 / real MPI baseline throughput", "%.0f" % (st / mt), DERIVED,
                  "gcl, mpi")
            items.append("Simulated POD16 (train's clocks): %s samples/s, %s per step: simulated "
                         "POD16 / real baseline on this host = %s." % (fmt_n(st), fmt_s(
                             P.sim_step_s()), fmt_n(st / mt)))
    elif not g.ok() or not m.ok():
        items.append("**No comparison of the platforms: %s.**" % P.why_missing("gcl", "mpi"))
    if not P.simulated() and g.ok():
        items.append("**The gcl run has no simulated part**: its JSON says `simulated: false`, so "
                     "the pod's step time, time split and memory are not reported.")
    items += restart_summary(P)
    items += elastic_summary(P)
    items += cost_summary(P)
    return [("h2", "Summary"), ("list", items)]


def cost_summary(P):
    e = P.target_epoch("gcl")
    if e is None:
        return ["Cost per usable run: **no time to target**: %s." % P.why_no_target()]
    base_t, base_c = P.baseline_to_target()
    pods = P.cost_rows()
    line = "One run to test accuracy %g (%d steps): the MPI baseline %s here (real)" % (
        P.target, e["step"], fmt_s(base_t) if base_t is not None else "**did not get there**")
    if pods:
        line += "; the pod %s (simulated: sim-step's prediction, steps only)" % ", ".join(
            "POD%d %s" % (n, fmt_s(t)) for n, t, _ in pods)
    if base_c is not None and pods and pods[0][2] is not None:
        line += "; at your prices %.4g on the baseline, %s on the pods" % (
            base_c, ", ".join("%.4g (POD%d)" % (c, n) for n, _, c in pods))
    elif P.pod_cost is None or P.base_cost is None:
        line += "; no prices given, so no cost"
    return [line + "."]


def restart_summary(P):
    ev, r = P.events, P.runs["restart"]
    if r.status is None:
        return ["Failure and recovery: **not run** (%s)." % ev.get("skipped", "no restart case")]
    if not ev.get("kill_unix_s"):
        return ["Failure and recovery: **the restart run %s, and no instance was killed** (%s)." % (
            r.state(), ev.get("skipped", "see raw/restart.log"))]
    det, rec = restart_times(P)
    same = ev.get("bitwise_identical") == "1"
    line = ("Failure and recovery (real): instance %s killed with SIGKILL after the checkpoint of "
            "step %s; poprun noticed in %s and the restarted job finished its first new step %s "
            "after the kill, with no manual intervention; the resumed run ends %s." % (
                ev.get("killed_instance", "?"), ev.get("checkpoint_at_kill", "?"), fmt_s(det),
                fmt_s(rec), "bitwise identical to the uninterrupted one" if same else
                "**not bitwise identical to the uninterrupted one**"))
    if r.status != 0:
        line = "Failure and recovery: **the restart run %s**. " % r.state() + line
    return [line]


def restart_times(P):
    ev, r = P.events, P.runs["restart"]
    kill, det = ev.get("kill_unix_s"), ev.get("detected_unix_s")
    d = float(det) - float(kill) if kill and det else None
    rec = None
    if kill and r.json and r.json.get("first_step_unix_s"):
        rec = r.json["first_step_unix_s"] - float(kill)
    return d, rec


def elastic_facts(P):
    """What the elastic run did: (the change that dropped the lost instance, the one that took
    its replacement back, seconds from the kill to the survivors' first step, the accuracy
    difference from the gcl run in points), each None when not there."""
    ev, r, g = P.elastic_events, P.runs["elastic"], P.runs["gcl"]
    changes = (r.json or {}).get("elastic") or []
    lost = next((c for c in changes if c["lost"]), None)
    back = next((c for c in changes if c["joined"]), None)
    kill, first = num(ev.get("kill_unix_s")), num(ev.get("first_step_after_unix_s"))
    rec = first - kill if kill is not None and first is not None else None
    d = (100 * (r.json["test_accuracy"] - g.json["test_accuracy"])
         if r.ok() and g.ok() else None)
    return lost, back, rec, d


def elastic_summary(P):
    ev, r = P.elastic_events, P.runs["elastic"]
    if r.status is None:
        return ["Elastic: **not run** (%s)." % ev.get("skipped", "no elastic case")]
    lost, back, rec, d = elastic_facts(P)
    if not lost:
        return ["Elastic: **the elastic run %s, and no change of layout is on record** (see "
                "raw/elastic.log)." % r.state()]
    line = ("Elastic (real): instance %s killed after step %s; the %d replicas left went on from "
            "memory and finished their first step %s after the kill, with %s whole-job restarts"
            % (ev.get("killed_instance", "?"), ev.get("kill_step", "?"), lost["replicas"],
               fmt_s(rec), ev.get("job_restarts", "?")))
    line += ("; the replacement joined at step %d (%d replicas again)" % (back["step"],
                                                                          back["replicas"])
             if back else "; **no replacement joined**")
    if d is not None:
        line += "; test accuracy %+.2f points from the gcl run's (%s 0.3)" % (
            d, "within" if abs(d) <= 0.3 else "**more than**")
    if r.status != 0:
        line = "Elastic: **the elastic run %s**. " % r.state() + line
    return [line + "."]


def convergence(P, plots):
    blocks = [("h2", "Convergence (real)"), ("img", plots["convergence.png"], "convergence")]
    hist = {k: P.runs[k].json["epoch_history"] for k in ("gcl", "mpi") if P.runs[k].ok()}
    if not hist:
        return blocks + [("p", "**No convergence data**: %s." % P.why_missing("gcl", "mpi"))]
    n = max(len(h) for h in hist.values())
    step = max(1, -(-n // 10))  # at most about ten rows: every STEP-th epoch, and the last
    rows = []
    for i in [i for i in range(n) if (i + 1) % step == 0 or i == 0 or i == n - 1]:
        row = [i + 1]
        for k in ("gcl", "mpi"):
            e = hist.get(k, [])[i] if i < len(hist.get(k, [])) else None
            row += ["%.4f" % e["test_accuracy"] if e else "-", "%.4f" % e["test_loss"] if e else "-"]
        rows.append(row)
    blocks.append(("p", "Test accuracy and loss after %s, both platforms (the same "
                        "model, data, seed and schedule; the curves lie on each other when the "
                        "platforms compute the same thing; every epoch is in raw/gcl.json and "
                        "raw/mpi.json)." % ("each epoch" if step == 1 else
                                            "every %d epochs" % step)))
    blocks.append(("table", ("epoch", "gcl test accuracy", "gcl test loss", "MPI test accuracy",
                             "MPI test loss"), rows))
    return blocks


def step_times(P, plots):
    blocks = [("h2", "Step time and warm-up (real)"), ("img", plots["step_time.png"], "step time")]
    rows = []
    for k in ("gcl", "mpi"):
        r = P.runs[k]
        if not r.ok():
            rows.append((P.label(k), "**%s**" % r.state()) + ("-",) * 7)
            continue
        j, d = r.json, r.json["step_time_s"]
        for q in ("p50", "p90", "p99", "max"):
            P.fig("step time %s, %s" % (q, P.label(k)), fmt_s(d[q]), REAL, k)
        launch = j["first_step_unix_s"] - r.start_unix if r.start_unix else None
        P.fig("launch to first step, %s" % P.label(k), fmt_s(launch), REAL, k)
        rows.append((P.label(k), fmt_s(d["p50"]), fmt_s(d["p90"]), fmt_s(d["p99"]), fmt_s(d["max"]),
                     "%d" % d["count"], ", ".join(fmt_s(t) for t in j["warmup_step_time_s"]),
                     fmt_s(j["time_to_first_step_s"]), fmt_s(launch)))
    blocks.append(("table", ("platform", "p50", "p90", "p99", "max", "steps x replicas",
                             "warm-up steps (slowest replica)", "process start to first step",
                             "launch to first step"), rows))
    blocks.append(("p", "Each replica times every step on its own thread (forward, backward, "
                        "gradient all-reduce, update); a replica's step ends with its slowest "
                        "stage. The first %s steps are warm-up, shown one by one and left out "
                        "of the percentiles (nearest rank)." % (
                            P.runs["gcl"].json["warmup_steps"] if P.runs["gcl"].ok() else "few")))
    return blocks


def waits(P):
    rows = []
    for k in ("gcl", "mpi"):
        r = P.runs[k]
        if not r.ok():
            rows.append((P.label(k), "**%s**" % r.state(), "-", "-", "-", "-"))
            continue
        j = r.json
        per = j["collective_wait_fraction_per_replica"]
        P.fig("collective wait fraction, %s" % P.label(k), pct(j["collective_wait_fraction"]),
              REAL, k)
        rows.append((P.label(k), pct(j["collective_wait_fraction"]),
                     "%s to %s" % (pct(min(per)), pct(max(per))) if per else "-",
                     pct(j["pipeline_wait_fraction"]), pct(j["compute_fraction"]),
                     fmt_n(j["host_memory_peak_bytes"] / 1e6, "MB")))
    return [("h2", "Waiting in collectives against computing (real)"),
            ("p", "The share of each replica's step time spent inside the gradient all-reduce "
                  "(waiting for the other replicas and moving the bytes), and waiting for "
                  "pipeline transfers; the rest is compute on the host. Host memory is the "
                  "largest process's peak resident size."),
            ("table", ("platform", "in the gradient all-reduce", "per replica", "pipeline waits",
                       "compute (the rest)", "host memory peak"), rows)]


def throughput(P, plots):
    rows = []
    for lab, v, kind in P.throughput_rows():
        kind = {"real": REAL, "prediction": PREDICTION}.get(kind, SIM)
        run = "gcl" if lab.startswith("gcl") else "mpi" if lab.startswith("MPI") else \
            "sim-" + lab.split(":")[0]
        P.fig("throughput, " + lab, fmt_n(v, "samples/s"), kind, run)
        rows.append((lab, fmt_n(v, "samples/s"), kind))
    return [("h2", "Throughput"), ("img", plots["throughput.png"], "throughput"),
            ("table", ("what", "samples/s", "kind"), rows)]


def sim_pod(P, plots):
    blocks = [("h2", "The simulated pod (simulated)"), ("img", plots["sim_time_split.png"], "split")]
    g = P.runs["gcl"]
    if P.simulated():
        j = g.json
        d = j["sim_step_time_dist_s"]
        P.fig("simulated step time on %s (median, train's clocks)" % j["topology"],
              fmt_s(j["sim_step_time_s"]), SIM, "gcl")
        split = j["sim_time_split"]
        mean = {k: sum(s[k] for s in split) / len(split) for k in
                ("step_s", "compute_s", "exchange_s", "sync_s", "host_wait_s", "idle_s")}
        blocks.append(("p", "train's own clocks on %s: every layer, the loss and the update are "
                            "charged by the layer-level cost model, the gradient all-reduce by "
                            "the pod's links. Step time p50 %s, p90 %s, p99 %s, max %s over %d "
                            "steps after the warm-up; per step and IPU (mean): compute %s, "
                            "exchange %s, sync %s, host wait %s, idle %s. Host wait is the host "
                            "sync train charges once per micro-batch (the fitted "
                            "host_sync_ns, docs/validation.md), as sim-step does a pipeline's "
                            "cycle." % (j["topology"], fmt_s(d["p50"]), fmt_s(d["p90"]),
                                      fmt_s(d["p99"]), fmt_s(d["max"]), d["count"],
                                      *[fmt_s(mean[k]) for k in ("compute_s", "exchange_s",
                                                                 "sync_s", "host_wait_s",
                                                                 "idle_s")])))
        blocks += sim_layers(P, j)
    else:
        blocks.append(("p", "**No simulated figures from train**: %s." % P.why_no_sim()))
    rows = []
    for n in PODS:
        r = P.runs["sim-POD%d" % n]
        if not r.ok():
            rows.append(("POD%d" % n, "**%s**" % r.state()) + ("-",) * 6)
            continue
        j = r.json
        P.fig("predicted step time on POD%d (sim-step)" % n, fmt_s(1e-6 * j["step_time_us"]),
              PREDICTION, "sim-POD%d" % n)
        t = sum(j[k] for k in ("compute_us", "exchange_us", "sync_us", "host_wait_us", "idle_us"))
        shares = " / ".join("%.0f" % (100 * j[k] / t) for k in (
            "compute_us", "exchange_us", "sync_us", "host_wait_us", "idle_us"))
        rows.append(("POD%d" % n, "%d x %d" % (j["replicas"], j["micro_batch"]),
                     fmt_s(1e-6 * j["step_time_us"]), fmt_n(j["samples_per_s"]), shares,
                     j["allreduce_algorithm"], j["dominant"],
                     fmt_n(j["peak_memory_bytes"] / 1e6, "MB")))
    blocks.append(("p", "sim-step's prediction from a model file of train's %s (raw/train-model.txt:"
                        " its convolutions, poolings, matmuls, ReLUs and loss as train charges "
                        "them), with the global batch split over the pod's replicas, so that "
                        "every pod runs the same steps to the same accuracy (strong scaling)." %
                        P.cfg.get("model", "mlp").upper()))
    blocks.append(("table", ("pod", "replicas x micro-batch", "step (predicted)", "samples/s",
                             "compute / exchange / sync / host / idle %", "all-reduce",
                             "dominant", "peak memory"), rows))
    s16 = P.runs["sim-POD16"]
    if P.simulated() and s16.ok():
        a, b = g.json["sim_step_time_s"], 1e-6 * s16.json["step_time_us"]
        blocks.append(("p", "The two simulated paths agree on POD16: train's clocks %s, sim-step "
                            "%s (%+.1f%%; train also charges zeroing its gradients)." % (
                                fmt_s(a), fmt_s(b), 100 * (a / b - 1))))
    return blocks


def sim_layers(P, j):
    """What each layer costs in train's simulated step, and the gradient all-reduce's simulated
    share of the step beside its real one on this host."""
    out = []
    layers = j.get("sim_layers") or []
    if layers:
        rows = [(l["name"], l["kind"], l["stage"] + 1, fmt_s(l["forward_s"]),
                 fmt_s(l["backward_s"])) for l in layers]
        for l in layers:
            P.fig("simulated %s forward + backward per step" % l["name"],
                  fmt_s(l["forward_s"] + l["backward_s"]), SIM, "gcl")
        out += [("p", "Each layer of replica 0's step on the simulated pod, charged by the "
                      "layer-level cost model sim-step uses for ResNet-50 (convolutions as "
                      "convolutions, pooling as pooling, dense layers as matmuls; each with its "
                      "ReLU, its tile syncs and its on-chip exchange):"),
                ("table", ("layer", "kind", "stage", "forward (simulated)",
                           "backward (simulated)"), rows)]
    split = j.get("sim_time_split") or []
    if split and "allreduce_s" in split[0]:
        sim_ar = max(s["allreduce_s"] for s in split[:j["ipus_per_replica"]])
        step = j["sim_step_time_s"]
        real = j["collective_wait_fraction"]
        P.fig("gradient all-reduce share of the step, simulated", pct(sim_ar / step), SIM, "gcl")
        P.fig("gradient all-reduce share of the step, real", pct(real), REAL, "gcl")
        out.append(("p", "The gradient all-reduce: %s of the simulated step on %s (%s), against "
                         "%s of the real step on this host (%d replicas in %s instances sharing "
                         "its cores: real waiting includes the other replicas' compute)." % (
                             fmt_s(sim_ar), j["topology"], pct(sim_ar / step), pct(real),
                             j["replicas"], j["instances"])))
    return out


def plan_pods(P):
    """How to run it on each pod: sim-step --plan's best per pod, against the plain split."""
    rows = []
    for n in PODS:
        r, base = P.runs["plan-POD%d" % n], P.runs["sim-POD%d" % n]
        sim = [c for c in (r.json or {}).get("candidates", []) if c.get("simulated")]
        if not r.ok() or not sim:
            rows.append(("POD%d" % n, "**%s**" % r.state()) + ("-",) * 5)
            continue
        best = max(sim, key=lambda c: c["samples_per_s"])
        gain = ("%+.0f%%" % (100 * (best["samples_per_s"] / base.json["samples_per_s"] - 1))
                if base.ok() else "-")
        P.fig("planned throughput on POD%d (sim-step --plan)" % n,
              fmt_n(best["samples_per_s"], "samples/s"), PLAN, "plan-POD%d" % n)
        rows.append(("POD%d" % n, "%d x %d" % (best["replicas"], best["stages"]),
                     "%d x %d" % (best["micro_batch"], best["gradient_accumulation"]),
                     "%s, recompute %s" % (best["optimizer_state"], best["recompute"]),
                     fmt_n(best["samples_per_s"]), gain, "`%s`" % best["command"]))
    return [("h2", "How to run it on each pod (simulated: a plan)"),
            ("p", "sim-step --plan searches replicas x stages, the layers' split, micro-batch x "
                  "accumulation at the pilot's global batch, the optimizer state's place and "
                  "recomputation on each pod, keeps what fits with 5% of every IPU's memory "
                  "free, and simulates the best in full (docs/planner.md). Its plan per pod, "
                  "against the prediction for the plain data-parallel split above, with the "
                  "command that gives these numbers; the pilot ran none of them:"),
            ("table", ("pod", "replicas x stages", "micro-batch x accumulation",
                       "optimizer state", "samples/s (planned)", "vs the plain split",
                       "command"), rows)]


def memory(P, plots):
    blocks = [("h2", "Simulated memory per IPU (simulated)"), ("img", plots["memory.png"], "memory")]
    if not P.simulated():
        return blocks + [("p", "**No simulated memory from train**: %s." % P.why_no_sim())]
    rows, keys = [], ("peak_bytes", "headroom_bytes", "weights_bytes", "gradients_bytes",
                      "optimizer_bytes", "activations_bytes", "stash_bytes", "other_bytes")
    for m in P.runs["gcl"].json["sim_memory"]:  # IPUs that hold the same, in one row
        vals = [fmt_n(m[k] / 1e6, "MB") for k in keys]
        if rows and rows[-1][1:] == vals:
            rows[-1][0] = "IPUs %d-%d" % (first, m["ipu"])
        else:
            first = m["ipu"]
            rows.append(["IPU %d" % first] + vals)
    m0 = P.runs["gcl"].json["sim_memory"][0]
    P.fig("simulated peak memory per IPU (train)", fmt_n(m0["peak_bytes"] / 1e6, "MB"), SIM, "gcl")
    P.fig("simulated headroom per IPU (train)", fmt_n(m0["headroom_bytes"] / 1e6, "MB"), SIM, "gcl")
    return blocks + [
        ("p", "What train allocates in each IPU's simulated SRAM (capacity %s): activations are "
              "what one micro-batch needs, the stash what the other micro-batches in flight of a "
              "pipeline hold. sim-step's predictions (right-hand plot) add Poplar's code and "
              "exchange buffers as it estimates them, which train does not allocate." % fmt_n(
                  m0["capacity_bytes"] / 1e6, "MB")),
        ("table", ("IPU", "peak", "headroom", "weights", "gradients", "optimizer", "activations",
                   "stash", "other"), rows)]


def recovery(P):
    ev, r = P.events, P.runs["restart"]
    blocks = [("h2", "Failure and recovery (real)")]
    if r.status is None:
        return blocks + [("p", "**Not run**: %s." % ev.get("skipped", "no restart case"))]
    det, rec = restart_times(P)
    P.fig("time to detect the failure", fmt_s(det), REAL, "restart")
    P.fig("time to recover (kill to the first new step)", fmt_s(rec), REAL, "restart")
    P.fig("resumed run bitwise identical", "yes" if ev.get("bitwise_identical") == "1" else "no",
          REAL, "restart")
    start = r.json.get("start_step") if r.json else None
    g = P.runs["gcl"]
    extra = r.wall_s - g.wall_s if r.wall_s and g.wall_s else None
    items = [
        "The gcl run again, with a checkpoint every %s steps, under `poprun --max-restarts 1`; "
        "instance %s (pid %s) killed with SIGKILL just after the checkpoint of step %s." % (
            ev.get("checkpoint_every", "?"), ev.get("killed_instance", "?"),
            ev.get("killed_pid", "?"), ev.get("checkpoint_at_kill", "?")),
        "Time to detect (kill to poprun's restart line): **%s**." % fmt_s(det),
        "Time to recover (kill to the end of the restarted job's first step): **%s**; it "
        "resumed from step %s by itself (POPDIST_RESTART_COUNT=1): 0 manual interventions." % (
            fmt_s(rec), start if start is not None else "?"),
        "The resumed run's final weights and optimizer state are %s the uninterrupted gcl run's "
        "(train-weights-cmp --exact)." % ("**bitwise identical to**" if ev.get(
            "bitwise_identical") == "1" else "**not the same as**"),
        "The whole run with the failure took %s, %s more than the uninterrupted one (real; the "
        "checkpoints, the restart and the steps redone since the checkpoint)." % (
            fmt_s(r.wall_s), fmt_s(extra) if extra is not None and extra >= 0 else "no"),
        "The MPI baseline has no automatic restart: mpirun ends the whole job when a rank dies, "
        "and resuming it (`train --backend mpi --checkpoint DIR --resume`) is a manual step. "
        "That is a property of mpirun, not measured here.",
    ]
    tries = int(ev.get("attempts", "1") or 1)
    late = tries - 1 if ev.get("kill_unix_s") else tries
    if late > 0:
        items.insert(1, "In %d of %d attempts the run wrote the checkpoint of its last step before "
                        "the pilot's kill could land (a loaded machine): a kill then shows no "
                        "recovery, and the case was run again from scratch." % (late, tries))
    if r.status != 0:
        items.insert(0, "**The restart run %s.**" % r.state())
    lines = [l for l in r.log_tail]
    blocks.append(("list", items))
    if lines:
        blocks.append(("p", "The end of its output: `%s`" % " / ".join(lines)[-400:]))
    return blocks


def elastic(P):
    ev, r = P.elastic_events, P.runs["elastic"]
    blocks = [("h2", "A lost instance without a restart (real; simulated steps)")]
    if r.status is None:
        return blocks + [("p", "**Not run**: %s." % ev.get("skipped", "no elastic case"))]
    lost, back, rec, d = elastic_facts(P)
    P.fig("elastic: kill to the survivors' first step", fmt_s(rec), REAL, "elastic")
    P.fig("elastic: whole-job restarts", ev.get("job_restarts", "?"), REAL, "elastic")
    if d is not None:
        P.fig("elastic: test accuracy against the gcl run", "%+.2f points" % d, DERIVED,
              "elastic, gcl")
    items = ["The gcl run again under `poprun --elastic --min-replicas %s --max-restarts 1`; "
             "train's `--fault kill-after-step:%s@%s` kills instance %s with SIGKILL after step "
             "%s. The global batch stays the same: the survivors raise their gradient "
             "accumulation, so every step is the same mini-batch." % (
                 ev.get("min_replicas", "?"), ev.get("kill_step", "?"),
                 ev.get("killed_instance", "?"), ev.get("killed_instance", "?"),
                 ev.get("kill_step", "?")),
             "Kill to the first step the survivors finished: **%s** (train's own lines: the "
             "kill's time, and the first step of the new membership's)." % fmt_s(rec),
             "Whole-job restarts: **%s** (poprun's \"restarting the job\" lines); no "
             "checkpoint was written or read." % ev.get("job_restarts", "?")]
    if d is not None:
        items.append("Test accuracy %.2f%% against the uninterrupted gcl run's %.2f%%: %+.2f "
                     "points (%s 0.3)." % (100 * r.json["test_accuracy"],
                                           100 * P.runs["gcl"].json["test_accuracy"], d,
                                           "within" if abs(d) <= 0.3 else "**more than**"))
    if r.status != 0:
        items.insert(0, "**The elastic run %s.**" % r.state())
    blocks.append(("list", items))
    changes = (r.json or {}).get("elastic") or []
    rows = []
    for c in changes:
        what = ("lost instance %s" % ", ".join(map(str, c["lost"])) if c["lost"] else
                "instance %s joined" % ", ".join(map(str, c["joined"])))
        P.fig("elastic: simulated step after step %d (%d replicas)" % (c["step"], c["replicas"]),
              fmt_s(c["sim_step_after_s"]), SIM, "elastic")
        rows.append((c["step"], c["membership"], what, "%d x %d" % (c["instances"], c["replicas"]),
                     fmt_s(c["wall_s"]), fmt_s(c["sim_step_before_s"]),
                     fmt_s(c["sim_step_after_s"])))
    if rows:
        blocks += [("p", "Each change of the job's layout, from train's JSON: the step after "
                         "which it took effect, and the simulated step on POD16 before and "
                         "after it (the pod charged for the layout that ran):"),
                   ("table", ("after step", "membership", "what", "instances x replicas",
                              "at (real, since start)", "simulated step before",
                              "simulated step after"), rows)]
    else:
        blocks.append(("p", "**No change of layout is on record** (raw/elastic.log)."))
    return blocks


def cost(P, plots):
    blocks = [("h2", "Cost per usable run"), ("img", plots["cost.png"], "cost")]
    e = P.target_epoch("gcl")
    if e is None:
        return blocks + [("p", "**No time to target**: %s." % P.why_no_target())]
    P.fig("steps to test accuracy %g" % P.target, "%d (epoch %d)" % (e["step"], e["epoch"]), REAL,
          "gcl")
    rows = []
    base_t, base_c = P.baseline_to_target()
    gcl_t = P.real_to_target("gcl")
    price = lambda p: "-" if p is None else "%g" % p  # noqa: E731
    money = lambda c: "-" if c is None else "%.4g" % c  # noqa: E731
    if base_t is not None:
        P.fig("MPI baseline: time to target", fmt_s(base_t), REAL, "mpi")
        rows.append(("MPI baseline, this host", fmt_s(base_t), REAL, price(P.base_cost),
                     money(base_c)))
    else:
        rows.append(("MPI baseline, this host", "**%s**" % (P.runs["mpi"].state() if not
                     P.runs["mpi"].ok() else "did not reach the target"), REAL, "-", "-"))
    if gcl_t is not None:
        rows.append(("gcl on this host (its real time, for reference)", fmt_s(gcl_t), REAL, "-", "-"))
    if P.simulated() and e.get("sim_elapsed_s") is not None:
        t = e["sim_elapsed_s"]
        c = t / 3600 * P.pod_cost if P.pod_cost is not None else None
        P.fig("POD16: simulated time to target (train's clocks)", fmt_s(t), SIM, "gcl")
        rows.append(("POD16, train's clocks (steps and evaluations)", fmt_s(t), SIM,
                     price(P.pod_cost), money(c)))
    for n, t, c in P.cost_rows():
        P.fig("POD%d: predicted time to target (sim-step, steps only)" % n, fmt_s(t),
              PREDICTION, "sim-POD%d" % n)
        rows.append(("POD%d, sim-step (steps only)" % n, fmt_s(t), PREDICTION,
                     price(P.pod_cost * n / 16 if P.pod_cost is not None else None), money(c)))
    if not P.cost_rows() and not (P.simulated() and e.get("sim_elapsed_s") is not None):
        blocks.append(("p", "**No simulated time to target**: %s; sim-step: %s." % (
            P.why_no_sim() if not P.simulated() else "train's clocks have no epochs",
            ", ".join("POD%d %s" % (n, P.runs["sim-POD%d" % n].state()) for n in PODS))))
    blocks.append(("p", "A usable run trains to test accuracy %g: %d steps (epoch %d) of the gcl "
                        "run. The baseline's time is real, from its launch to the end of that "
                        "epoch's evaluation here. The pod's is simulated: train's clocks on "
                        "POD16, or sim-step's predicted step time times the same steps on each pod "
                        "(the same global batch, so the same steps); neither includes "
                        "compiling or starting the job on a real pod." % (
                            P.target, e["step"], e["epoch"])))
    if P.pod_cost is None or P.base_cost is None:
        blocks.append(("p", "Prices: %s. The report claims none: pass `--pod-cost-per-hour` (the "
                            "price of one hour of the POD16 the job runs on; larger pods are "
                            "priced per IPU from it, an assumption) and "
                            "`--baseline-cost-per-hour`." % (
                                "none given" if P.pod_cost is None and P.base_cost is None else
                                "only one given")))
    else:
        blocks.append(("p", "Prices as given: %g per hour of POD16 (larger pods priced per IPU "
                            "from it, an assumption), %g per hour of the baseline." % (
                                P.pod_cost, P.base_cost)))
    blocks.append(("table", ("platform", "time to target", "kind", "price per hour", "cost of "
                             "one run"), rows))
    return blocks


def figures_table(P):
    """Every figure, grouped by the run (and so the command) that produced it."""
    blocks = [("h2", "Every figure and the command that produced it")]
    groups = []
    for name, value, kind, run in P.figures:
        if not groups or groups[-1][0] != run:
            groups.append((run, []))
        groups[-1][1].append((name, value, kind if kind != DERIVED else "derived"))
    merged = {}
    for run, rows in groups:
        merged.setdefault(run, []).extend(rows)
    for run, rows in merged.items():
        runs = [x.strip() for x in run.split(",")]
        cmds = ["`%s`" % P.runs[x].cmd for x in runs if x in P.runs and P.runs[x].cmd]
        what = "From run %s: %s" % (run, "; ".join(cmds)) if len(runs) == 1 else \
            "Derived from runs %s of this invocation (commands above)" % run
        blocks += [("p", what), ("table", ("figure", "value", "kind"), rows)]
    return blocks


def build(P, plots):
    doc = header(P)
    body = (convergence(P, plots) + step_times(P, plots) + waits(P) + throughput(P, plots) +
            sim_pod(P, plots) + plan_pods(P) + memory(P, plots) + recovery(P) + elastic(P) +
            cost(P, plots))
    return doc + summary(P) + runs_table(P) + body + figures_table(P)
