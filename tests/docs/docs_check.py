"""The documentation's examples and figures, checked against the build.

    python3 docs_check.py CHECKOUT BUILD static     # links, figures, C and Python examples,
                                                    # generated tables, every option documented
    python3 docs_check.py CHECKOUT BUILD shell      # runs every shell example not marked

Pages: README.md, docs/*.md, and every other README.md of the checkout (poprun's, python's,
the examples', the libraries', the fault tests'). In them:

  - A figure (a measured or simulated number) is quoted as a link to its row of the one table,
    docs/figures.md, which figures.py generates from docs/figures.json:
    [89.29%](docs/figures.md#train-accuracy). Its text must be the table's value, so two
    pages cannot disagree.
  - Every ```c block is a whole program or file: it is compiled with -Wall -Wextra -Werror
    against gcl/include (and linked with libgcl when it has a main).
  - A ```python block is the file that a marker just before it names, to the byte:
    <!-- docs: file examples/python/allreduce.py -->
    A ```c block so marked with a name that is no file of the checkout ("prog.c") is written
    there, in the shell examples' directory, before the page's shell examples run.
  - Every ```sh, ```bash and ```console block is run (console: its "$ " lines; with the marker
    <!-- docs: output --> its other lines are the exact output), from a directory that looks
    like the checkout with BUILD as build/, within SHELL_TIMEOUT_S, and must exit 0 (or the
    status of a marker <!-- docs: exit 1 -->, for an example of an error), unless marked with
    the reason it is not and the shorter variant that runs instead:
    <!-- docs: not run: trains for 50 s; instead: the block below -->
    "instead:" names the block (or blocks) below or above (the nearest shell block that way
    must run), or a test or script of the checkout that runs the same (a path:
    tests/scaling/plan_check.sh). Pages owned by others
    may be listed in not_run.tsv instead (page, first line, reason), which may also add the
    "instead" of a block marked on its page; a row that matches no block is an error.
  - A command (a line starting with "$ ", build/, scripts/, poprun, mpirun, ...) is never in a
    block without a language, where it would not be run: tag it sh or console (or text when
    it is not one to type).
Relative links must reach a file, and an anchor into a page of the documentation a heading.
"""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402

CHECKOUT, BUILD, WHAT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
SHELL_TIMEOUT_S = 60  # a block meant to take under 10 s, with room for a loaded machine
# Pages other sessions are writing: linked before they land.
COMING = {"docs/planner.md", "docs/chaos.md"}
Block = collections.namedtuple("Block", "page line lang text marks")
failures = []
passed = 0


def ok(what):
    global passed
    passed += 1
    print(f"ok: {what}")


def bad(what, *detail):
    failures.append(what)
    print(f"FAIL: {what}")
    for d in detail:
        print("  " + str(d).replace("\n", "\n  "))


def pages():
    """README.md, docs/*.md, then every other README.md (not in build trees or hidden ones)."""
    out = [os.path.join(CHECKOUT, "README.md")]
    docs = os.path.join(CHECKOUT, "docs")
    out += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    readmes = []
    for d, dirs, files in os.walk(CHECKOUT):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build", "out"))
                   and not os.path.islink(os.path.join(d, x))]
        if "README.md" in files and d != CHECKOUT:
            readmes.append(os.path.join(d, "README.md"))
    return out + sorted(readmes)


def rel(path):
    return os.path.relpath(path, CHECKOUT)


def blocks(path):
    """The fenced blocks of PATH with the docs markers just before each."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        marks, k = {}, i - 1
        while k >= 0 and lines[k].strip().startswith("<!-- docs:"):
            mm = re.match(r"<!-- docs: (not run|file|output|exit)(?::? ?(.*?))? -->$",
                          lines[k].strip())
            if mm:
                marks[mm.group(1)] = (mm.group(2) or "").strip()
            k -= 1
        j = i + 1
        while j < len(lines) and not re.match(rf"^{m.group(1)}```\s*$", lines[j]):
            j += 1
        text = "\n".join(x[len(m.group(1)):] for x in lines[i + 1:j]) + "\n"
        out.append(Block(rel(path), i + 1, m.group(2), text, marks))
        i = j + 1
    return out


def not_run_list():
    """{(page, first line): reason} of not_run.tsv."""
    out = {}
    for line in open(os.path.join(HERE, "not_run.tsv"), encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            page, first, reason = line.rstrip("\n").split("\t")
            out[page, first] = reason
    return out


SHELL = ("sh", "bash", "console")


def first_line(block):
    return block.text.splitlines()[0] if block.text.strip() else ""


def not_run_reason(block, listed):
    """Why BLOCK is not run (its marker, with a listed "instead" added), or None."""
    mark, row = block.marks.get("not run"), listed.get((block.page, first_line(block)))
    if mark and row and "instead:" not in mark:
        return mark + "; " + row[row.index("instead:"):] if "instead:" in row else mark
    return mark or row


# --- links and figures ----------------------------------------------------------------------

def slug(heading):
    """GitHub's anchor of a heading."""
    h = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip())
    return re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    out = {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}
    return out | set(re.findall(r'<a id="([^"]+)"></a>', text))


def check_links():
    table = figures.load(CHECKOUT)
    for page in pages():
        text = open(page, encoding="utf-8").read()
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        n = quoted = 0
        for m in re.finditer(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)", prose):
            label, target = m.group(1), m.group(2)
            if re.match(r"^[a-z]+:", target) or target.startswith("#") and not target[1:]:
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            n += 1
            if not os.path.exists(full):
                if rel(full) in COMING:
                    print(f"note: {rel(page)}: {target} is not written yet")
                else:
                    bad(f"{rel(page)}: link to {target}: no such file")
                continue
            if os.path.basename(full) == "figures.md" and anchor:
                quoted += 1
                fig = table.get(anchor)
                shown = label.strip("*` ")
                if fig is None:
                    bad(f"{rel(page)}: figure {anchor} is not in docs/figures.json")
                elif shown != fig["value"]:
                    bad(f"{rel(page)}: figure {anchor} quoted as {shown!r}, the table says "
                        f"{fig['value']!r}")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                bad(f"{rel(page)}: link to {target}: no such heading in {rel(full)}")
        ok(f"{rel(page)}: {n} links resolve, {quoted} figures agree with docs/figures.md")
    want = figures.render(table)
    have = open(os.path.join(CHECKOUT, "docs", "figures.md"), encoding="utf-8").read()
    if have == want:
        ok(f"docs/figures.md is what figures.py makes of docs/figures.json ({len(table)} rows)")
    else:
        bad("docs/figures.md is not up to date: python3 tests/docs/figures.py --write")


def check_front_door():
    text = open(os.path.join(CHECKOUT, "README.md"), encoding="utf-8").read()
    for page in ("poprun", "libgcl", "python", "collectives", "simulated-pod", "benchmarks",
                 "pilot", "troubleshooting", "testing"):
        if f"(docs/{page}.md)" not in text:
            bad(f"README.md does not link docs/{page}.md")
    first = re.search(r"```sh\n(.*?)```", text, re.S)
    if not first or not first.group(1).startswith("scripts/demo") or \
            "scripts/test" not in first.group(1):
        bad("README.md does not open with scripts/demo and scripts/test")
    ok(f"README.md: {len(text.splitlines())} lines, the two commands first, every docs page linked")


# --- examples -------------------------------------------------------------------------------

def check_c(block, tmp):
    src = os.path.join(tmp, f"block{block.line}.c")
    with open(src, "w", encoding="utf-8") as f:
        f.write(block.text)
    cc = os.environ.get("CC", "cc")
    cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I",
           os.path.join(CHECKOUT, "gcl", "include"), src]
    cmd += os.environ.get("GCL_DOCS_CFLAGS", "").split()  # a sanitized build's flags
    if re.search(r"\bint\s+main\s*\(", block.text):
        cmd += ["-L", os.path.join(BUILD, "lib"), "-lgcl", "-Wl,-rpath," +
                os.path.join(BUILD, "lib"), "-o", src[:-2]]
    else:
        cmd += ["-c", "-o", src[:-2] + ".o"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    where = f"{block.page}:{block.line}: C example"
    if r.returncode == 0:
        ok(f"{where} compiles{' and links' if '-lgcl' in cmd else ''}")
    else:
        bad(f"{where} does not compile", r.stderr)


def check_python(block):
    where = f"{block.page}:{block.line}: Python example"
    name = block.marks.get("file")
    if "not run" in block.marks:
        return ok(f"{where}: not checked ({block.marks['not run']})")
    if not name:
        return bad(f"{where}: no '<!-- docs: file PATH -->' marker")
    try:
        want = open(os.path.join(CHECKOUT, name), encoding="utf-8").read()
    except OSError as e:
        return bad(f"{where}: {name}: {e.strerror}")
    if want == block.text:
        ok(f"{where} is {name}")
    else:
        bad(f"{where} differs from {name}")


# A line that is a command to type: in a block without a language it would never be run.
COMMAND = re.compile(r"^(\$ |sudo |build/|scripts/|tests/|poprun |mpirun |cmake |ctest |python3 |"
                     r"cc |gcc |cd |export |gcl-bench |train |sim-step |all_reduce_perf )")


def check_examples_run():
    """Every command block runs, or says why not and what runs instead (see the top)."""
    listed, used, n = not_run_list(), set(), 0
    for page in pages():
        bs = blocks(page)
        for i, b in enumerate(bs):
            where = f"{b.page}:{b.line}"
            if b.lang == "":
                cmds = [x for x in b.text.splitlines() if x.strip() and not x.startswith("#")]
                if cmds and COMMAND.match(cmds[0]):
                    bad(f"{where}: a command in a block without a language, which is never run: "
                        f"tag it sh or console (or text if it is not one to type)", cmds[0])
                continue
            if b.lang not in SHELL:
                continue
            n += 1
            if (b.page, first_line(b)) in listed:
                used.add((b.page, first_line(b)))
            reason = not_run_reason(b, listed)
            if reason:
                check_instead(where, reason, bs, i, listed)
    for page, first in set(listed) - used:
        bad(f"not_run.tsv: no shell block of {page} starts with {first!r}")
    ok(f"{n} shell examples: each runs, or names what runs instead")


def check_instead(where, reason, bs, i, listed):
    m = re.search(r"instead: (.+)$", reason)
    if not m:
        return bad(f"{where}: not run ({reason}), and no shorter variant that runs: add "
                   f"'; instead: the block below' (or above, or a test that runs it)")
    what = m.group(1)
    if re.match(r"the blocks? (below|above)", what):
        step = 1 if "below" in what else -1
        k = i + step
        while 0 <= k < len(bs) and bs[k].lang not in SHELL:
            k += step
        if not 0 <= k < len(bs) or not_run_reason(bs[k], listed):
            bad(f"{where}: not run; instead: {what}, but that block does not run")
        return
    paths = [w.rstrip(".,;:)") for w in re.findall(r"[\w./-]+/[\w.-]+", what)]
    missing = [p for p in paths if not os.path.exists(os.path.join(CHECKOUT, p))]
    if not paths or missing:
        bad(f"{where}: not run; instead: {what}: name a block or a test of the checkout",
            *(f"no such file: {p}" for p in missing))


def check_static():
    check_links()
    check_front_door()
    with tempfile.TemporaryDirectory() as tmp:
        for page in pages():
            for b in blocks(page):
                if b.lang == "c":
                    check_c(b, tmp)
                elif b.lang == "python":
                    check_python(b)
    check_examples_run()
    check_generated_tables()
    check_options_documented()


def generated(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout


def check_generated_tables():
    """Tables that programs print, kept in the pages as they print them."""
    for cmd, page in (([os.path.join(BUILD, "bin", "gcl-info"), "--markdown"], "libgcl.md"),
                      ([os.path.join(BUILD, "bin", "poprun"), "--_help-markdown"], "poprun.md")):
        table = generated(cmd).strip()
        text = open(os.path.join(CHECKOUT, "docs", page), encoding="utf-8").read()
        if table and table in text:
            ok(f"docs/{page} has the table of {os.path.basename(cmd[0])} {cmd[1]}, as printed")
        else:
            bad(f"docs/{page} lacks the table {os.path.basename(cmd[0])} {cmd[1]} prints")


def check_options_documented():
    """Every option and variable a program knows is documented on its page."""
    docs = os.path.join(CHECKOUT, "docs")
    every = "".join(open(p, encoding="utf-8").read() for p in pages())
    for prog, args, page in (("train", ["--help"], "train.md"),
                             ("gcl-bench", ["--help"], "benchmarks.md"),
                             ("all_reduce_perf", ["--help"], "benchmarks.md"),
                             ("sim-step", ["--help"], None)):
        out = generated([os.path.join(BUILD, "bin", prog)] + args)
        names = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9_-]+)", out)) - {"--help"}
        text = open(os.path.join(docs, page), encoding="utf-8").read() if page else \
            open(os.path.join(CHECKOUT, "examples", "simstep", "README.md"),
                 encoding="utf-8").read()
        missing = sorted(n for n in names if n not in text)
        where = f"docs/{page}" if page else "examples/simstep/README.md"
        if missing:
            bad(f"{prog}: options not in {where}: {' '.join(missing)}")
        else:
            ok(f"{prog}: its {len(names)} options are in {where}")
    names = set(re.findall(r"`(GCL_[A-Z0-9_]+)`", generated(
        [os.path.join(BUILD, "bin", "gcl-info"), "--markdown"])))
    names |= {"GCL_LIBRARY", "GCL_BUILD_DIR", "POPRUN_LIBGCL", "POPRUN_MPIRUN"}
    missing = sorted(n for n in names if n not in every)
    if missing:
        bad(f"variables documented nowhere: {' '.join(missing)}")
    else:
        ok(f"{len(names)} environment variables are documented")


# --- shell examples -------------------------------------------------------------------------

def workspace(tmp):
    """A directory like the checkout, with BUILD as build/ (links, so nothing is copied)."""
    ws = os.path.join(tmp, "checkout")
    os.mkdir(ws)
    for name in os.listdir(CHECKOUT):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(CHECKOUT, name), os.path.join(ws, name))
    os.symlink(BUILD, os.path.join(ws, "build"))
    return ws


def commands(block):
    """(script, expected output or None) of a shell block."""
    if block.lang != "console":
        return block.text, None
    cmds, out, cont = [], [], False
    for line in block.text.splitlines():
        if line.startswith("$ ") or cont:
            cmds.append(line[2:] if line.startswith("$ ") and not cont else line)
            cont = line.endswith("\\")
        else:
            out.append(line)
    return "\n".join(cmds) + "\n", "\n".join(out).rstrip() + "\n"


def by_instance(text):
    """TEXT's lines, trailing blanks cut, those of poprun's instances in instance order (each
    instance's own in the order written): instances run side by side, so their lines
    interleave differently from run to run."""
    lines = [x.rstrip() for x in text.rstrip().splitlines()]

    def instance(line):
        m = re.match(r"\[instance (\d+)\] ", line)
        return int(m.group(1)) if m else -1
    return "\n".join(sorted(lines, key=instance)) + "\n"


def check_shell():
    skip = not_run_list()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               GCL_TIMEOUT_S="60")
    env.pop("GCL_LIBRARY", None)
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(tmp)
        for page in pages():
            for b in blocks(page):
                name = b.marks.get("file")
                if b.lang == "c" and name and not os.path.exists(os.path.join(CHECKOUT, name)):
                    with open(os.path.join(ws, name), "w", encoding="utf-8") as f:
                        f.write(b.text)
                if b.lang not in SHELL:
                    continue
                where = f"{b.page}:{b.line}"
                reason = not_run_reason(b, skip)
                if reason:
                    ok(f"{where}: not run: {reason}")
                    continue
                want_rc = int(b.marks.get("exit") or 0)
                script, want = commands(b)
                t0 = time.monotonic()
                try:
                    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ws,
                                       env=env, capture_output=True, text=True,
                                       timeout=SHELL_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    bad(f"{where}: still running after {SHELL_TIMEOUT_S} s (mark it not run?)",
                        script)
                    continue
                dt = time.monotonic() - t0
                got = by_instance(r.stdout)
                want = by_instance(want) if want is not None else None
                if r.returncode != want_rc:
                    bad(f"{where}: exit {r.returncode} after {dt:.1f} s (expected {want_rc})",
                        script, (r.stdout + r.stderr)[-3000:])
                elif "output" in b.marks and got != want:
                    bad(f"{where}: output differs from the page", script, "page:\n" + want,
                        "run:\n" + got)
                else:
                    ok(f"{where}: ran in {dt:.1f} s" + (", output as shown" if "output" in
                                                        b.marks else ""))
        shutil.rmtree(ws, ignore_errors=True)


if WHAT == "static":
    check_static()
elif WHAT == "shell":
    check_shell()
else:
    sys.exit(f"docs_check.py: expected static or shell, not {WHAT!r}")
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
