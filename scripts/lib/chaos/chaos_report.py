"""The reports of scripts/chaos: report.json (everything) and report.md (for people), from the
run's record. The figures are nearest-rank percentiles over the faults."""

import json
import math
import os

KIND_NAMES = {
    "kill": "kill", "stall": "stall", "partition": "partition", "disk_full": "disk full",
    "torn": "torn checkpoint", "recovery_kill": "kill during recovery", "torn_all": "all torn",
}


def nearest_rank(values, p):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    return v[max(0, math.ceil(p / 100.0 * len(v)) - 1)]


def covered(faults):
    """The kinds of fault the run went through: torn and recovery_kill faults kill too."""
    kinds = set()
    for f in faults:
        kinds.add(f["kind"])
        if f["kind"] in ("torn", "recovery_kill", "torn_all"):
            kinds.add("kill")
    return sorted(kinds)


def over_interval(f, c):
    """Whether fault F redid more steps than the checkpoint interval C allows. A torn checkpoint
    is destroyed on purpose, so the job must go back to the newest whole one before it
    (F["newest_whole"]) and redo every step since: the victims are killed once the torn file
    has landed, and under load the step after it may end first (seen: 11 steps redone at an
    interval of 10). Then the claim is that it resumed from that checkpoint, no further back."""
    allowed = c
    if f.get("newest_whole") is not None and f.get("max_step_before") is not None:
        allowed = max(c, f["max_step_before"] - f["newest_whole"])
    return f.get("steps_redone", 0) > allowed


def summarize(rep):
    faults = rep["faults"]
    c = rep["config"]["checkpoint_every"]
    times = [f.get("first_new_step_s") for f in faults]
    stopped = [f.get("first_new_step_s") for f in faults if f.get("restarts")]
    redone = [f.get("steps_redone", 0) for f in faults]
    over = [f["index"] for f in faults if over_interval(f, c)]
    return {
        "faults_injected": len(faults),
        "faults_planned": len(rep["plan"]),
        "kinds_covered": covered(faults),
        "mttr_p50_s": nearest_rank(times, 50),
        "mttr_p99_s": nearest_rank(times, 99),
        "mttr_restarted_p50_s": nearest_rank(stopped, 50),
        "mttr_restarted_p99_s": nearest_rank(stopped, 99),
        "steps_redone_total": sum(redone),
        "steps_redone_max": max(redone) if redone else 0,
        "faults_over_interval": over,
        "restarts_used": rep["run"].get("restarts_used"),
        "restarts_unplanned": len(rep["run"].get("unplanned", [])),
    }


def _s(x, unit=" s"):
    return "-" if x is None else f"{x:.2f}{unit}" if isinstance(x, float) else f"{x}{unit}"


def _cell(text):
    return str(text if text is not None else "-").replace("|", "\\|").replace("\n", " ")


def markdown(rep):
    s, c, r = rep["summary"], rep["config"], rep["run"]
    out = [f"# Chaos run: {c['faults']} faults, seed {c['seed']}", ""]
    verdict = "**PASSED**" if rep["result"] == "pass" else "**FAILED**: " + "; ".join(
        rep["reasons"])
    out += [verdict, "",
            f"`train` on {c['replicas']} replicas, {c['hosts']} namespace hosts x "
            f"{c['instances_per_host']} instances, {rep['plan_total_steps']} steps, a checkpoint "
            f"every {c['checkpoint_every']} steps, under `poprun --max-restarts "
            f"{c['max_restarts']}`, `GCL_TIMEOUT_S={c['gcl_timeout_s']}`.", "",
            "| figure | value |", "|---|---|",
            f"| exit status of the job | {r.get('exit')} |",
            f"| final weights (md5) | {r.get('md5')} |",
            f"| uninterrupted run (md5) | {rep['reference'].get('md5')} |",
            f"| bitwise identical | {'yes' if r.get('md5_match') else 'no'} |",
            f"| faults injected | {s['faults_injected']} of {s['faults_planned']} |",
            f"| kinds covered | {', '.join(KIND_NAMES[k] for k in s['kinds_covered'])} |",
            f"| MTTR (fault to first new step), p50 / p99 | {_s(s['mttr_p50_s'])} / "
            f"{_s(s['mttr_p99_s'])} |",
            f"| the same over faults that restarted the job, p50 / p99 | "
            f"{_s(s['mttr_restarted_p50_s'])} / {_s(s['mttr_restarted_p99_s'])} |",
            f"| steps redone: total, most in one fault (interval {c['checkpoint_every']}) | "
            f"{s['steps_redone_total']}, {s['steps_redone_max']} |",
            f"| restarts used (of them unplanned) | {s['restarts_used']} "
            f"({s['restarts_unplanned']}) |",
            f"| wall time: chaos run, uninterrupted run, all | {_s(r.get('wall_s'))}, "
            f"{_s(rep['reference'].get('wall_s'))}, {_s(rep.get('wall_s'))} |", ""]
    out += ["## Faults", "",
            "| # | kind | what | at step | noticed by | noticed after | restarts | resumed "
            "from | steps redone | first new step after |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for f in rep["faults"]:
        out.append("| " + " | ".join(_cell(x) for x in (
            f["index"], KIND_NAMES[f["kind"]], f["what"], f["step_at_fault"],
            f.get("outcome") or f.get("noticed_by"), _s(f.get("noticed_after_s")),
            f.get("restarts", 0), f.get("resumed_from"), f.get("steps_redone", 0),
            _s(f.get("first_new_step_s")))) + " |")
    out += ["", "Details of every fault (tears, second kills, poprun's lines, checkpoints written "
            "again) are in report.json.", ""]
    if r.get("unplanned"):
        out += ["## Restarts no fault caused", ""]
        out += [f"- at {u['t_s']} s: `{u['poprun']}`" for u in r["unplanned"]] + [""]
    lo = rep.get("leftovers", {})
    out += ["## Left behind", "",
            f"- processes of the job after it ended: {len(lo.get('processes', []))}",
            f"- /dev/shm entries and OpenMPI session directories: "
            f"{len(lo.get('shm_and_session_dirs', []))}",
            f"- work directory and checkpoint file system removed: "
            f"{'yes' if lo.get('work_dir_removed') else 'no'}",
            f"- namespaces, /etc/netns and netns-cluster files after the cluster: "
            f"{lo.get('namespaces', 'not checked')}", ""]
    out += ["## Commands", "", "```", rep["command"], "```", "",
            "The job, and the uninterrupted run with the same seed:", "", "```",
            r.get("command", ""), rep["reference"].get("command", ""), "```", ""]
    return "\n".join(out)


def write(rep, out_dir):
    rep["summary"] = summarize(rep)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "report.json.tmp"), "w") as f:
        json.dump(rep, f, indent=1, default=str)
    os.replace(os.path.join(out_dir, "report.json.tmp"), os.path.join(out_dir, "report.json"))
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(markdown(rep))
