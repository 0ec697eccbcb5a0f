"""What scripts/chaos does to the job and what it looks at: the job's processes (found by a
marker in their environment), signals sent only to the process meant (its start time checked),
a host's link, the checkpoint file system, checkpoint files, directory events (inotify) and the
leftovers of a run."""

import ctypes
import errno
import os
import re
import shutil
import signal
import struct
import subprocess
import time
import zlib

CKPT_HEADER_BYTES = 512


# ---- processes ------------------------------------------------------------------------------

def _environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return None


def start_time(pid):
    """The start time of PID (clock ticks since boot), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[19])
    except (OSError, IndexError, ValueError):
        return None


def marked(mark):
    """Every live process whose environment carries CHAOS_MARK=MARK: {pid: (comm, env dict)}."""
    want = b"CHAOS_MARK=" + mark.encode()
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        env = _environ(int(name))
        if not env or want not in env:
            continue
        try:
            with open(f"/proc/{name}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{name}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        d = {}
        for kv in env:
            k, _, v = kv.partition(b"=")
            if k.startswith(b"POPDIST_"):
                d[k.decode()] = v.decode(errors="replace")
        out[int(name)] = (comm, d)
    return out


def instance_programs(mark, program, run):
    """The pids of the program (comm PROGRAM) of each instance of restart RUN: {index: pid}."""
    out = {}
    for pid, (comm, env) in marked(mark).items():
        if comm != program[:15]:
            continue
        if env.get("POPDIST_RESTART_COUNT") != str(run):
            continue
        idx = env.get("POPDIST_INSTANCE_INDEX")
        if idx is not None and idx.isdigit():
            out[int(idx)] = pid
    return out


class Proc:
    """A process as it was when found: a signal reaches it only while it is the same one."""

    def __init__(self, pid):
        self.pid = pid
        self.start = start_time(pid)

    def signal(self, sig):
        if self.start is None or start_time(self.pid) != self.start:
            return False
        try:
            os.kill(self.pid, sig)
            return True
        except ProcessLookupError:
            return False

    def alive(self):
        return self.start is not None and start_time(self.pid) == self.start


def kill_all(procs, sig=signal.SIGKILL):
    """Sends SIG to each of PROCS; returns how many it reached."""
    return sum(1 for p in procs if p.signal(sig))


# ---- the network ----------------------------------------------------------------------------

def link(cluster_id, host, up):
    """Brings host HOST's link (eth0 of namespace CLUSTER-hHOST) up or down."""
    ns = f"{cluster_id}-h{host}"
    subprocess.run(["ip", "-n", ns, "link", "set", "eth0", "up" if up else "down"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


# ---- the checkpoint file system ---------------------------------------------------------------

def mount_tmpfs(path, size):
    os.makedirs(path, mode=0o700, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "chaos-ckpt", path],
                   check=True)


def umount(path):
    return subprocess.run(["umount", path], stderr=subprocess.DEVNULL).returncode == 0


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(path, leave):
    """Writes PATH until the file system it is on has LEAVE bytes free (or none). Returns the
    bytes left free."""
    chunk = b"\0" * (1 << 16)
    with open(path, "wb") as f:
        while True:
            room = free_bytes(os.path.dirname(path)) - leave
            if room <= 0:
                break
            try:
                f.write(chunk[: min(len(chunk), room)])
                f.flush()
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    return free_bytes(os.path.dirname(path))


# ---- checkpoints ------------------------------------------------------------------------------

CKPT_RE = re.compile(r"^ckpt-(\d{10})\.gclt$")


def checkpoints(directory):
    """The steps of DIRECTORY's checkpoint files, newest first."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted((int(m.group(1)) for n in names if (m := CKPT_RE.match(n))), reverse=True)


def ckpt_name(directory, step):
    return os.path.join(directory, f"ckpt-{step:010d}.gclt")


def ckpt_valid(path):
    """Whether PATH reads as train writes it: its size is what its header says, and the CRC-32
    of everything before its last 4 bytes is those bytes (train's own check, ckpt.c)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    if len(data) < CKPT_HEADER_BYTES + 4 or data[:8] != b"GCLTRAIN":
        return False
    nparams, nstate = struct.unpack_from("<QI", data, 24)
    if len(data) != CKPT_HEADER_BYTES + (1 + nstate) * nparams * 4 + 4:
        return False
    return zlib.crc32(data[:-4]) == struct.unpack_from("<I", data, len(data) - 4)[0]


def tear(path, how):
    """Truncates PATH to a fraction of its size, or flips the bits XOR of the byte at a
    fraction of it. Returns a sentence saying what was done."""
    size = os.path.getsize(path)
    at = min(size - 1, int(how["fraction"] * size))
    if how["how"] == "truncate":
        os.truncate(path, at)
        return f"truncated from {size} to {at} bytes"
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)[0]
        f.seek(at)
        f.write(bytes([b ^ how["xor"]]))
    return f"byte {at} of {size} changed from 0x{b:02x} to 0x{b ^ how['xor']:02x}"


# ---- directory events -------------------------------------------------------------------------

IN_CREATE = 0x100
IN_MOVED_TO = 0x80


class Inotify:
    """Names created in, or renamed into, one directory (Linux inotify through libc)."""

    def __init__(self, directory):
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        wd = self.libc.inotify_add_watch(self.fd, directory.encode(), IN_CREATE | IN_MOVED_TO)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")

    def read(self):
        """The (mask, name) events that have come."""
        out = []
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return out
        at = 0
        while at + 16 <= len(buf):
            _wd, mask, _cookie, n = struct.unpack_from("iIII", buf, at)
            name = buf[at + 16: at + 16 + n].split(b"\0", 1)[0].decode(errors="replace")
            out.append((mask, name))
            at += 16 + n
        return out

    def close(self):
        os.close(self.fd)


# ---- leftovers --------------------------------------------------------------------------------

def job_leaks(job, tmpdir, shm="/dev/shm"):
    """What the job named JOB left: entries of SHM whose name carries it (poprun's
    poprun-JOB-* directory of OpenMPI's segments, libgcl's host boxes gcl-JOB-*), and anything
    in its temporary directory TMPDIR (OpenMPI's session directories). Call it once the job has
    ended: poprun removes all of it as it exits, so nothing needs waiting for."""
    out = []
    for top, pick in ((shm, lambda n: job in n), (tmpdir, lambda n: True)):
        try:
            out += sorted(os.path.join(top, n) for n in os.listdir(top) if pick(n))
        except OSError:
            pass
    return out


def remove_job_shm(job, shm="/dev/shm"):
    """Removes what the job named JOB keeps in SHM (after its poprun was killed outright)."""
    try:
        names = [n for n in os.listdir(shm) if job in n]
    except OSError:
        return
    for n in names:
        path = os.path.join(shm, n)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


