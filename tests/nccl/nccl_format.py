"""A reader of nccl-tests' output, written from nccl-tests' documented format: the README
("Usage", "Arguments") and doc/PERFORMANCE.md (what time, algbw and busbw mean, and the bus
factor of each collective), and the layout its tools print, as the scripts that parse nccl-tests
read it. It knows nothing of gcl.

    report = parse(text)          # raises FormatError, naming the line, on anything else
    report.devices                # [Device(rank, group, pid, host, device, bus, name)]
    report.rows                   # [Row(size, count, type, redop, root, out, inp)]
    report.out_of_bounds          # (N, "OK" | "FAILED")
    report.avg_busbw              # float

The layout (every line that is not a row starts with '#'):

    # nThread T nGpus G minBytes B maxBytes E step: S(factor|bytes) warmup iters: W iters: N ...
    #
    # Using devices
    #  Rank  R Group  G Pid  P on       HOST device  D [BUS] NAME      (one line per device)
    #
    #          out-of-place                       in-place
    #       size   count   type   redop    root     time   algbw   busbw  #wrong  time ...
    #        (B) (elements)                         (us)  (GB/s)  (GB/s)         (us) ...
           SIZE  COUNT  TYPE  REDOP  ROOT  TIME ALGBW BUSBW WRONG  TIME ALGBW BUSBW WRONG
    # Out of bounds values : N OK|FAILED
    # Avg bus bandwidth    : X [OK|FAILED]

A failed run prints no footer but "HOST: Test NCCL failure FILE:LINE '...'" and
" .. HOST pid P: Test failure FILE:LINE" lines (parse_failure reads them).
"""

import collections
import re

Device = collections.namedtuple("Device", "rank group pid host device bus name")
Half = collections.namedtuple("Half", "time algbw busbw wrong")
Row = collections.namedtuple("Row", "size count type redop root out inp")
Report = collections.namedtuple(
    "Report", "nthread ngpus min_bytes max_bytes devices rows out_of_bounds avg_busbw")

# doc/PERFORMANCE.md, "Summary": busbw = algbw x factor(n ranks).
BUS_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "alltoall": lambda n: (n - 1) / n,
}

_CONFIG = re.compile(r"^# nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: (\d+)"
                     r"\((factor|bytes)\) warmup iters: (\d+) iters: (\d+) agg iters: (\d+) "
                     r"validation: (\d+) graph: (\d+)$")
_DEVICE = re.compile(r"^#  Rank +(\d+) Group +(\d+) Pid +(\d+) on +(\S+) device +(\d+) "
                     r"\[([0-9a-fA-Fx:]+)\] (.+)$")
_OOB = re.compile(r"^# Out of bounds values : (\d+) (OK|FAILED)$")
_AVG = re.compile(r"^# Avg bus bandwidth +: (\S+) ?(OK|FAILED)? *$")
_NUM = r"[0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?"
_FAIL = re.compile(r"^(\S+): Test (NCCL|CUDA) failure (\S+):(\d+) '(.*)'$")
_TRACE = re.compile(r"^ \.\. (\S+) pid (\d+): Test failure (\S+):(\d+)$")


class FormatError(ValueError):
    pass


def _half(fields, line):
    time, algbw, busbw, wrong = fields
    for f in (time, algbw, busbw):
        if not re.fullmatch(_NUM, f):
            raise FormatError(f"not a number: {f!r} in {line!r}")
    if wrong != "N/A" and not re.fullmatch(r"\d+", wrong):
        raise FormatError(f"#wrong is {wrong!r} in {line!r}")
    return Half(float(time), float(algbw), float(busbw), None if wrong == "N/A" else int(wrong))


def _row(line):
    f = line.split()
    if len(f) != 13:
        raise FormatError(f"a row has 13 columns, this one {len(f)}: {line!r}")
    if not (f[0].isdigit() and f[1].isdigit() and re.fullmatch(r"-?\d+", f[4])):
        raise FormatError(f"size, count and root are integers: {line!r}")
    return Row(int(f[0]), int(f[1]), f[2], f[3], int(f[4]), _half(f[5:9], line),
               _half(f[9:13], line))


def parse(text):
    """The Report of one run's stdout (prefixes such as a launcher's tags already removed)."""
    config, devices, rows, oob, avg = None, [], [], None, None
    in_devices = False
    for line in text.splitlines():
        if not line.startswith("#"):
            if not line.strip():
                continue  # the last line: the library's last error, empty after a good run
            if oob is not None:
                raise FormatError(f"a row after the footer: {line!r}")
            rows.append(_row(line))
            continue
        if line == "# Using devices":
            if devices or in_devices:
                raise FormatError("a second '# Using devices' block")
            in_devices = True
            continue
        m = _DEVICE.match(line)
        if m:
            if not in_devices:
                raise FormatError(f"a device line outside '# Using devices': {line!r}")
            rank, group, pid, host, dev, bus, name = m.groups()
            devices.append(Device(int(rank), int(group), int(pid), host, int(dev), bus, name))
            continue
        in_devices = False
        if line.startswith("#  Rank"):
            raise FormatError(f"a malformed device line: {line!r}")
        m = _CONFIG.match(line)
        if m:
            config = m
        elif _OOB.match(line):
            if oob is not None:
                raise FormatError("a second 'Out of bounds values' line")
            m = _OOB.match(line)
            oob = (int(m.group(1)), m.group(2))
        elif _AVG.match(line):
            avg = float(_AVG.match(line).group(1))
    if config is None:
        raise FormatError("no '# nThread ... nGpus ...' line")
    if oob is None or avg is None:
        raise FormatError("no footer ('# Out of bounds values', '# Avg bus bandwidth')")
    return Report(int(config.group(1)), int(config.group(2)), int(config.group(3)),
                  int(config.group(4)), devices, rows, oob, avg)


def parse_failure(text):
    """The (host, file, line, message) of each "Test NCCL failure" line and the number of
    " .. Test failure" trace lines; FormatError if a footer is there."""
    fails, traces = [], 0
    for line in text.splitlines():
        if _OOB.match(line) or _AVG.match(line):
            raise FormatError(f"a failed run printed a footer line: {line!r}")
        m = _FAIL.match(line)
        if m:
            fails.append((m.group(1), m.group(3), int(m.group(4)), m.group(5)))
        elif _TRACE.match(line):
            traces += 1
    return fails, traces


def check_bandwidth(row, collective, nranks):
    """Whether each half's algbw is size/time and busbw algbw x the bus factor, within the
    rounding of the printed figures (2 decimals). Returns a list of complaints."""
    bad = []
    factor = BUS_FACTOR[collective](nranks)
    for name, h in (("out-of-place", row.out), ("in-place", row.inp)):
        if h.time <= 0:
            bad.append(f"{row.size} B {name}: time {h.time}")
            continue
        algbw = row.size / (h.time * 1e-6) / 1e9
        # time is printed with 2 decimals: its rounding moves algbw by up to 0.005/time of it.
        tol = 0.006 + algbw * 0.006 / h.time
        if abs(h.algbw - algbw) > tol:
            bad.append(f"{row.size} B {name}: algbw {h.algbw}, size/time {algbw:.4f}")
        if abs(h.busbw - h.algbw * factor) > 0.006 + h.algbw * factor * 0.01:
            bad.append(f"{row.size} B {name}: busbw {h.busbw}, algbw x {factor:.3f} "
                       f"= {h.algbw * factor:.4f}")
    return bad
