"""scripts/lib/chaos/chaos_loop.py's event order, with a real process and no job (ctest runs it as
chaos_loop_order; pytest can too): every line is noted (ON_EVENT) just before the driver sees
it, also when one read brings many lines, so the driver judges a line by that line's state."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "lib", "chaos"))
from chaos_loop import JobEnded, Loop, Wait  # noqa: E402


def run_loop(first, last, want):
    """A process that writes step lines FIRST..LAST in one write; a driver that waits for the
    first step line whose noted step WANT accepts. Returns (accepted step, steps seen)."""
    lines = "".join("[instance 0] epoch 1/2 step %d/137\n" % s for s in range(first, last + 1))
    cmd = ["sh", "-c", "printf '%s'" % lines]
    noted = {"step": None}
    seen = []

    def on_event(ev):
        if ev[0] == "line":
            noted["step"] = int(ev[2].split("step ")[1].split("/")[0])

    def driver():
        try:
            while True:
                ev = yield Wait(lambda e: e is not None and e[0] == "line", 10.0)
                if ev is None:
                    return
                seen.append(noted["step"])
                if want(noted["step"]):
                    accepted.append(noted["step"])
                    yield Wait(lambda e: e is not None and e[0] == "exit", 10.0)
                    return
        except JobEnded:
            return

    accepted = []
    with open(os.devnull, "w") as log:
        Loop(cmd, dict(os.environ), log, time.monotonic(), on_event=on_event).run(driver())
    return (accepted[0] if accepted else None), seen


def test_each_line_is_judged_by_its_own_step():
    # Steps 57-70 in one write: the first one a disk-full fault may start at (s % 10 in 1-6)
    # is 61; noting the whole read first judged every line as step 70 and accepted none.
    step, seen = run_loop(57, 70, lambda s: s >= 57 and 1 <= s % 10 <= 6)
    assert step == 61
    assert seen == [57, 58, 59, 60, 61]


if __name__ == "__main__":
    test_each_line_is_judged_by_its_own_step()
    print("chaos_loop_order: ok")
