"""The ctypes layouts in python/gcl/_lib.py against the C headers: a C program built from the
public headers prints every mapped struct's size and each field's offset, and they must match
what ctypes computes. A field added in C and not in Python (or moved) fails here, not as a
crash in some later call."""

import ctypes
import os
import subprocess

import pytest

from gcl import _lib

# ctypes class, C type, header
STRUCTS = [
    (_lib.Group, "gcl_group_t", "gcl/types.h"),
    (_lib.JobInfo, "gcl_job_info_t", "gcl/gcl.h"),
    (_lib.Config, "gcl_config_t", "gcl/gcl.h"),
    (_lib.SimStats, "gcl_sim_stats_t", "gcl/sim.h"),
]

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.environ.get("GCL_INCLUDE_DIR",
                         os.path.join(HERE, "..", "..", "gcl", "include"))


def c_layouts(tmp_path):
    lines = ["#include <stdio.h>", "#include <stddef.h>"]
    lines += sorted({f'#include "{h}"' for _, _, h in STRUCTS})
    lines.append("int main(void) {")
    for cls, ctype, _ in STRUCTS:
        lines.append(f'printf("{ctype} sizeof %zu\\n", sizeof({ctype}));')
        for name, _ in cls._fields_:
            lines.append(f'printf("{ctype} {name} %zu\\n", offsetof({ctype}, {name}));')
    lines += ["return 0;", "}"]
    src = tmp_path / "layouts.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layouts"
    cc = os.environ.get("CC", "cc")
    build = subprocess.run([cc, "-std=c11", "-I", INCLUDE, str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    if build.returncode != 0:
        pytest.fail("a field of the Python layouts is not in the C struct:\n" + build.stderr)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_every_mapped_struct_matches_its_header(tmp_path):
    c = c_layouts(tmp_path)
    wrong = []
    for cls, ctype, _ in STRUCTS:
        if ctypes.sizeof(cls) != c[(ctype, "sizeof")]:
            wrong.append(f"{ctype}: size {c[(ctype, 'sizeof')]} in C, {ctypes.sizeof(cls)} in "
                         f"Python (a field is missing)")
        for name, _ in cls._fields_:
            off = getattr(cls, name).offset
            if off != c[(ctype, name)]:
                wrong.append(f"{ctype}.{name}: offset {c[(ctype, name)]} in C, {off} in Python")
    assert not wrong, "\n".join(wrong)
