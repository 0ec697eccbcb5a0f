"""Re-runs the published figures: every row of docs/figures.json whose command runs in under 2
minutes, as figures_rerun.tsv says (the full tier's docs_figures_rerun).

    python3 figures_rerun.py CHECKOUT BUILD [KEY...]

A simulated figure must come out to the digit (the cost model is deterministic); a real one
must have its command still work and still print the line that carries it; the number itself
moves from run to run and is not held to the table. A row not classified in figures_rerun.tsv,
or a command that fails, fails the test: a figure whose command no longer works is a failing
test, not a stale line. Prints each row's verdict and time; exits 0 when every row passed.
"""

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402


def classification(path):
    """{key: (how, timeout, command, expect)} of figures_rerun.tsv."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 5 or cols[0] in out:
                raise ValueError(f"{path}:{n}: expected KEY HOW TIMEOUT COMMAND EXPECT, once a key")
            out[cols[0]] = (cols[1], cols[2], cols[3], cols[4])
    return out


def workspace(tmp, checkout, build):
    """A directory like the checkout, with BUILD as build/ (links, so nothing is copied)."""
    ws = os.path.join(tmp, "checkout")
    os.mkdir(ws)
    for name in os.listdir(checkout):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(checkout, name), os.path.join(ws, name))
    os.symlink(build, os.path.join(ws, "build"))
    return ws


def run(command, timeout, ws, env):
    """(exit status or None on timeout, output, seconds) of COMMAND in WS."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(["bash", "-c", command], cwd=ws, env=env, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else ""
        return None, out, time.monotonic() - t0


def main():
    checkout, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    only = set(sys.argv[3:])
    table = figures.load(checkout)
    how = classification(os.path.join(HERE, "figures_rerun.tsv"))
    failed = []
    for key in sorted(set(table) ^ set(how)):
        where = "figures_rerun.tsv" if key in table else "docs/figures.json"
        failed.append(key)
        print(f"FAIL {key}: not in {where}: classify every figure (tests/docs/figures_rerun.tsv)")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("GCL_LIBRARY", None)
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(tmp, checkout, build)
        for key in [k for k in table if k in how and (not only or k in only)]:
            mode, timeout, command, expect = how[key]
            if mode == "skip":
                print(f"skip {key}: {command}")
                continue
            source = mode.split(":", 1)[1] if mode.startswith("same:") else key
            if source not in how or how[source][0] != "run":
                failed.append(key)
                print(f"FAIL {key}: {mode}: {source} is not a row that runs")
                continue
            if source not in outputs:
                _, src_timeout, src_cmd, _ = how[source]
                cmd = table[source]["command"] if src_cmd == "-" else src_cmd
                outputs[source] = run(cmd, int(src_timeout), ws, env) + (cmd,)
            rc, out, secs, cmd = outputs[source]
            if rc != 0:
                why = "no end within its timeout" if rc is None else f"exit {rc}"
                tail = "\n  ".join(out.strip().splitlines()[-8:])
                print(f"FAIL {key}: `{cmd}`: {why} after {secs:.0f} s\n  {tail}")
                failed.append(key)
            elif expect != "-" and expect not in out:
                print(f"FAIL {key}: `{cmd}` ran ({secs:.0f} s) but did not print '{expect}' "
                      f"(the table says {table[key]['value']}, {table[key]['kind']})")
                failed.append(key)
            else:
                held = f", '{expect}' printed" if expect != "-" else ""
                print(f"ok   {key}: {secs:.0f} s{held}")
    print(f"figures_rerun: {len(failed)} of {len(table)} rows failed: {', '.join(failed)}"
          if failed else f"figures_rerun: every figure that runs in minutes ran")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
