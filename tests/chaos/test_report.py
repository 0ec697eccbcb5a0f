"""The verdicts of scripts/lib/chaos/chaos_report.py that need no job: which faults cost more steps than
the checkpoint interval allows (ctest runs it as chaos_report_verdicts; pytest can too)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "lib", "chaos"))
import chaos_report  # noqa: E402


def test_a_kill_may_redo_up_to_the_interval():
    assert not chaos_report.over_interval({"steps_redone": 10, "max_step_before": 60}, 10)
    assert chaos_report.over_interval({"steps_redone": 11, "max_step_before": 61}, 10)


def test_a_torn_checkpoint_may_cost_every_step_since_the_whole_one_before():
    # Step 50's checkpoint torn, step 51 ended before the kill: back to 40, 11 steps redone.
    f = {"steps_redone": 11, "max_step_before": 51, "newest_whole": 40}
    assert not chaos_report.over_interval(f, 10)


def test_a_torn_checkpoint_resumed_further_back_is_over():
    # The job went back to 30 though 40 was whole: the recovery lost a checkpoint.
    f = {"steps_redone": 21, "max_step_before": 51, "newest_whole": 40}
    assert chaos_report.over_interval(f, 10)


def test_summarize_lists_the_faults_over():
    rep = {"config": {"checkpoint_every": 10}, "plan": [1, 2], "run": {},
           "faults": [{"index": 1, "kind": "torn", "steps_redone": 11, "max_step_before": 51,
                       "newest_whole": 40},
                      {"index": 2, "kind": "kill", "steps_redone": 12, "max_step_before": 62}]}
    assert chaos_report.summarize(rep)["faults_over_interval"] == [2]


if __name__ == "__main__":  # without pytest: every test_ function in turn
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print("ok", name)
