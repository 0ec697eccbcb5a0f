"""docs/figures.md, the one table of every figure the documentation quotes, made from
docs/figures.json. Pages quote a figure as a link to its row, [VALUE](figures.md#KEY), and
docs_check.py holds every quote to the table.

    python3 tests/docs/figures.py --write      # after editing docs/figures.json

docs/figures.json is a list of rows: key (the anchor), what, value (exactly as quoted),
detail (what else the run gave, the conditions), command (that produced it), kind ("real":
measured here by the wall clock; "simulated": the cost model's, the same on any machine).
"""

import json
import os
import sys

HEAD = """# Figures

Every figure that README.md and the pages of docs/ quote comes from this table: a page links
each one to its row here, and `ctest -R docs_static` fails when a quote differs from the row.
*Real* figures were measured by the wall clock on the development machine (2 cores, 24 GiB,
Debian 12, often shared with other jobs: the load is given where it mattered); *simulated*
ones are the cost model's, bitwise the same on any machine. Timings are ratios measured side by
side in one run where a comparison is made.

This page is generated: edit `docs/figures.json` and run `python3 tests/docs/figures.py
--write`.

| figure | value | kind | measured | command |
|---|---|---|---|---|
"""


def load(checkout):
    """{key: row} of docs/figures.json (in its order)."""
    with open(os.path.join(checkout, "docs", "figures.json"), encoding="utf-8") as f:
        rows = json.load(f)
    out = {}
    for r in rows:
        missing = {"key", "what", "value", "detail", "command", "kind"} - set(r)
        if missing or r["key"] in out:
            raise ValueError(f"docs/figures.json: row {r.get('key')!r}: "
                             f"{'missing ' + ', '.join(sorted(missing)) if missing else 'twice'}")
        out[r["key"]] = r
    return out


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def render(table):
    lines = [HEAD]
    for key, r in table.items():
        cmd = f"`{cell(r['command'])}`" if r["command"] else ""
        lines.append(f"| <a id=\"{key}\"></a>{cell(r['what'])} | **{cell(r['value'])}** | "
                     f"{r['kind']} | {cell(r['detail'])} | {cmd} |\n")
    return "".join(lines)


if __name__ == "__main__":
    checkout = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    text = render(load(checkout))
    path = os.path.join(checkout, "docs", "figures.md")
    if "--write" in sys.argv[1:]:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}")
    else:
        sys.stdout.write(text)
