"""The pilot's figures (scripts/pilot-report): what each run measured, labelled by kind.

Every figure is one of:
  real                     measured on this host in this invocation of scripts/pilot (wall
                           clock, noisy)
  simulated                the cost model of a GC200 pod (docs/validation.md): train's own
                           clocks on POD16, the job as it ran
  simulated: a prediction  sim-step's prediction for a pod from a model file of train's model,
                           the job as the pilot lays it out there (data-parallel, the global
                           batch split over the replicas)
  simulated: a plan        sim-step --plan's best way to run that model file on a pod, which
                           the pilot did not run: the planner's choice, simulated in full
  derived                  computed from figures of the same invocation, saying from which
A ratio is only formed from runs of the same invocation, and one of a real and a simulated
figure says so in its name.
"""
import csv
import json
import math
import os
import re

PODS = (16, 64, 128, 256)
REAL, SIM, DERIVED = "real, this host", "simulated", "derived"
PREDICTION, PLAN = "simulated: a prediction", "simulated: a plan"


def fmt_s(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return "%.1f us" % (1e6 * s)
    if s < 1:
        return "%.2f ms" % (1e3 * s)
    if s < 600:
        return "%.2f s" % s
    return "%.1f min" % (s / 60)


def fmt_n(v, unit=""):
    if v is None:
        return "-"
    text = "{:,.0f}".format(v) if abs(v) >= 100 else "%.3g" % v
    return text + (" " + unit if unit else "")


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_env(path):
    env = {}
    for line in (read(path, "") or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class Run:
    """One run of the pilot: its command, exit status, times, output and JSON."""

    def __init__(self, raw, name, out):
        p = lambda ext: os.path.join(raw, name + ext)  # noqa: E731
        self.name = name
        cmd = read(p(".cmd"))
        self.cmd = cmd.replace(out + "/", "DIR/").replace(out, "DIR") if cmd else None
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        if self.cmd:
            self.cmd = self.cmd.replace(root + "/", "")
        self.status = None if read(p(".status")) is None else int(read(p(".status")))
        self.start_unix = num(read(p(".start_unix")))
        self.wall_s = num(read(p(".wall_s")))
        self.load = read(p(".load"), "?")
        log = (read(p(".log"), "") or "").splitlines()
        self.log_tail = [line for line in log if line.strip()][-3:]
        self.json = read_json(p(".json")) if self.status == 0 else None
        self.csv = p(".csv")

    def ok(self):
        return self.status == 0 and self.json is not None

    def state(self):
        if self.status is None:
            return "not run"
        if self.status != 0:
            return "FAILED (exit status %d)" % self.status
        return "ok" if self.json is not None else "ok, but it wrote no results"


class Pilot:
    """Everything one invocation of scripts/pilot measured."""

    def __init__(self, out):
        self.out = out
        raw = os.path.join(out, "raw")
        self.cfg = read_env(os.path.join(raw, "config.env"))
        self.events = read_env(os.path.join(raw, "restart.events"))
        self.elastic_events = read_env(os.path.join(raw, "elastic.events"))
        names = ["gcl", "mpi", "restart", "elastic"] + ["sim-POD%d" % n for n in PODS] + [
            "plan-POD%d" % n for n in PODS]
        self.runs = {n: Run(raw, n, out) for n in names}
        self.target = num(self.cfg.get("target_accuracy")) or 0.88
        self.pod_cost = num(self.cfg.get("pod_cost_per_hour"))
        self.base_cost = num(self.cfg.get("baseline_cost_per_hour"))
        self.cmp = read(os.path.join(raw, "weights-cmp.log"))
        self.cmp_status = read(os.path.join(raw, "weights-cmp.status"))
        self.figures = []  # (figure, value, kind, run name)

    # ---- what is there ------------------------------------------------------------------------
    def label(self, k):
        return {"gcl": "gcl", "mpi": "MPI baseline"}.get(k, k)

    def why_missing(self, *keys):
        return "; ".join("%s %s" % (self.label(k), self.runs[k].state()) for k in keys
                         if not self.runs[k].ok()) or "no data"

    def simulated(self):
        g = self.runs["gcl"]
        return g.ok() and g.json.get("simulated") and g.json.get("sim_memory")

    def why_no_sim(self):
        g = self.runs["gcl"]
        if not g.ok():
            return "the gcl run %s" % g.state()
        if not self.simulated():
            return "the gcl run has no simulated part (its JSON says simulated: false)"
        return "no simulated figures"

    def sim_pods(self):
        return [(n, self.runs["sim-POD%d" % n].json) for n in PODS
                if self.runs["sim-POD%d" % n].ok()]

    def fig(self, name, value, kind, run):
        self.figures.append((name, value, kind, run))
        return value

    # ---- per-step data --------------------------------------------------------------------------
    def replica_steps(self, k):
        """Real step times of every (replica, step) after the warm-up, from the step log."""
        r = self.runs[k]
        if not r.ok() or not os.path.exists(r.csv):
            return []
        first = r.json.get("start_step", 0) + r.json.get("warmup_steps", 0)
        worst = {}
        with open(r.csv) as f:
            for row in csv.DictReader(f):
                if int(row["step"]) > first:
                    key = (row["replica"], row["step"])
                    worst[key] = max(worst.get(key, 0.0), float(row["step_s"]))
        return list(worst.values())

    def step_histograms(self):
        data = {k: self.replica_steps(k) for k in ("gcl", "mpi")}
        data = {k: v for k, v in data.items() if v}
        if not data:
            return {}
        lo = min(min(v) for v in data.values())
        hi = max(max(v) for v in data.values())
        lo, hi = math.log10(max(lo, 1e-7)), math.log10(max(hi, 1e-7)) + 1e-9
        nb = 40
        width = (hi - lo) / nb or 1
        res = {}
        for k, v in data.items():
            counts = [0] * nb
            for t in v:
                counts[min(nb - 1, int((math.log10(max(t, 1e-7)) - lo) / width))] += 1
            centres = [10 ** (lo + (i + 0.5) * width) for i in range(nb)]
            res[k] = (centres, [c / len(v) for c in counts], self.runs[k].json["step_time_s"])
        return res

    def sim_step_s(self):
        g = self.runs["gcl"]
        return g.json.get("sim_step_time_s") if g.ok() else None

    # ---- rows of the plots ----------------------------------------------------------------------
    def throughput_rows(self):
        rows = []
        for k in ("gcl", "mpi"):
            r = self.runs[k]
            if r.ok():
                rows.append(("%s: real, this host" % self.label(k), r.json["samples_per_s"], "real"))
        if self.sim_step_s():
            rows.append(("gcl: simulated POD16 (train's clocks)",
                         self.runs["gcl"].json["sim_samples_per_s"], "sim"))
        for n, j in self.sim_pods():
            rows.append(("POD%d: predicted (sim-step)" % n, j["samples_per_s"], "prediction"))
        return rows

    def sim_split_rows(self):
        rows = []
        if self.simulated():
            for s in self.runs["gcl"].json["sim_time_split"]:
                rows.append(("IPU %d" % s["ipu"], [1e6 * s[k] for k in (
                    "compute_s", "exchange_s", "sync_s", "host_wait_s", "idle_s")]))
        for n, j in self.sim_pods():
            rows.append(("POD%d sim-step, predicted" % n, [j[k] for k in (
                "compute_us", "exchange_us", "sync_us", "host_wait_us", "idle_us")]))
        return rows

    def sim_memory_rows(self):
        rows = []
        if self.simulated():
            for m in self.runs["gcl"].json["sim_memory"]:
                v = {k: m[k + "_bytes"] for k in ("weights", "gradients", "optimizer",
                                                  "activations", "stash", "other")}
                rows.append(("IPU %d" % m["ipu"], v, m["capacity_bytes"]))
        for n, j in self.sim_pods():
            st = j["per_stage"][0]
            rows.append(("POD%d sim-step, predicted" % n, dict(st["plan_memory"], total=0),
                         st["peak_memory_bytes"] + st["memory_headroom_bytes"]))
        return rows

    # ---- time and cost to the target accuracy ---------------------------------------------------
    def target_epoch(self, k):
        r = self.runs[k]
        if not r.ok():
            return None
        for e in r.json["epoch_history"]:
            if e["test_accuracy"] >= self.target:
                return e
        return None

    def why_no_target(self):
        r = self.runs["gcl"]
        if not r.ok():
            return "the gcl run %s" % r.state()
        best = max((e["test_accuracy"] for e in r.json["epoch_history"]), default=0)
        if not self.target_epoch("gcl"):
            return "the gcl run did not reach %.4g (best %.4f)" % (self.target, best)
        return "no simulated pod: " + "; ".join(
            "POD%d %s" % (n, self.runs["sim-POD%d" % n].state()) for n in PODS)

    def real_to_target(self, k):
        """Real seconds from the launch of run K to the end of its target epoch's evaluation."""
        r, e = self.runs[k], self.target_epoch(k)
        if e is None or r.start_unix is None:
            return None
        return r.json["start_unix_s"] - r.start_unix + e["elapsed_s"]

    def baseline_to_target(self):
        t = self.real_to_target("mpi")
        c = t / 3600 * self.base_cost if t is not None and self.base_cost is not None else None
        return t, c

    def cost_rows(self):
        e = self.target_epoch("gcl")
        if e is None:
            return []
        rows = []
        for n, j in self.sim_pods():
            t = e["step"] * j["step_time_us"] * 1e-6
            c = t / 3600 * self.pod_cost * n / 16 if self.pod_cost is not None else None
            rows.append((n, t, c))
        return rows


# ---- the document: a list of blocks, written as Markdown or as HTML -----------------------------
def _inline_html(text, esc):
    text = esc(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


def to_markdown(doc):
    lines = []
    for b in doc:
        kind = b[0]
        if kind in ("h1", "h2"):
            lines += ["#" * (1 if kind == "h1" else 2) + " " + b[1], ""]
        elif kind == "p":
            lines += [b[1], ""]
        elif kind == "list":
            lines += ["- " + item for item in b[1]] + [""]
        elif kind == "img":
            lines += ["![%s](%s)" % (b[2], b[1]), ""]
        elif kind == "table":
            lines.append("| " + " | ".join(b[1]) + " |")
            lines.append("|" + "---|" * len(b[1]))
            for row in b[2]:
                lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
            lines.append("")
    return "\n".join(lines)


STYLE = """body { font-family: sans-serif; max-width: 1180px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 3px 7px; vertical-align: top; }
th { background: #f0f0f0; } code { font-size: 0.85em; word-break: break-all; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.4em 0 1.4em; }
img[data-broken] { outline: 4px solid red; } .bad { color: #b00; font-weight: bold; }
#img-check { font-size: 0.85em; color: #555; }"""

CHECK = """<script>
/* The browser check (scripts/pilot-check-html): every image must have loaded. */
function pilotCheckImages() {
  var imgs = document.images, bad = [];
  for (var i = 0; i < imgs.length; i++)
    if (!imgs[i].complete || imgs[i].naturalWidth === 0 || imgs[i].hasAttribute('data-broken'))
      bad.push(imgs[i].getAttribute('src'));
  var el = document.getElementById('img-check');
  el.setAttribute('data-status', bad.length ? 'missing' : 'ok');
  el.textContent = bad.length ? 'image check: MISSING ' + bad.join(', ')
                              : 'image check: all ' + imgs.length + ' images loaded';
}
window.addEventListener('load', pilotCheckImages);
</script>"""


def to_html(doc, esc):
    body = []
    for b in doc:
        kind = b[0]
        if kind in ("h1", "h2"):
            body.append("<%s>%s</%s>" % (kind, _inline_html(b[1], esc), kind))
        elif kind == "p":
            body.append("<p>%s</p>" % _inline_html(b[1], esc))
        elif kind == "list":
            body.append("<ul>%s</ul>" % "".join("<li>%s</li>" % _inline_html(i, esc)
                                                for i in b[1]))
        elif kind == "img":
            body.append('<img src="%s" alt="%s" onerror="this.setAttribute(\'data-broken\', 1)">'
                        % (esc(b[1]), esc(b[2])))
        elif kind == "table":
            head = "".join("<th>%s</th>" % _inline_html(h, esc) for h in b[1])
            rows = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % _inline_html(str(c), esc)
                                                   for c in row) for row in b[2])
            body.append("<table><tr>%s</tr>%s</table>" % (head, rows))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Pilot report</title>"
            "<style>%s</style></head>\n<body>\n%s\n"
            "<p id=\"img-check\" data-status=\"pending\">image check: pending</p>\n%s\n"
            "</body></html>\n" % (STYLE, "\n".join(body), CHECK))
