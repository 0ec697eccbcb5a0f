"""A short run of the PyTorch example under poprun: it trains, keeps the replicas identical,
reports the simulated step time and ends with the test accuracy line."""

import os
import re

import pytest

from helpers import CHECKOUT, PYTHON, by_instance, poprun, run

pytest.importorskip("torch")
TRAIN = os.path.join(CHECKOUT, "examples", "python", "train_torch.py")


def test_quick_run_under_poprun():
    r = poprun(4, 2, [PYTHON, TRAIN, "--quick", "--epochs", "2"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = by_instance(r.stdout)
    assert list(out) == [0], "only instance 0 prints"
    lines = out[0]
    assert lines[0] == ("train_torch: 4096 training and 10000 test samples from "
                        "/usr/share/datasets/fashion-mnist")
    assert lines[1] == ("train_torch: MLP 784-256-128-10 (235146 parameters), 4 replicas over "
                        "2 instances")
    assert [ln.split(":")[0] for ln in lines if ln.startswith("epoch")] == ["epoch 1/2 done",
                                                                            "epoch 2/2 done"]
    assert re.fullmatch(r"train_torch: simulated on M2000 \(4 IPUs\): [0-9.]+ us per step, "
                        r"[0-9]+ samples/s", lines[-2]), lines[-2]
    m = re.fullmatch(r"train_torch: test accuracy (0\.[0-9]{4}) \(([0-9]+)/10000\), test loss "
                     r"[0-9.]+", lines[-1])
    assert m, lines[-1]
    # Two epochs over 4096 samples: well above chance (0.1), far from the full run's 0.89.
    assert 0.5 < float(m.group(1)) < 0.95 and int(m.group(2)) == round(float(m.group(1)) * 1e4)


def test_cnn_quick_run_under_poprun():
    r = poprun(4, 2, [PYTHON, TRAIN, "--model", "cnn", "--quick"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = by_instance(r.stdout)[0]
    assert lines[1] == ("train_torch: CNN 28x28x1 conv:16:3 pool:2 conv:32:3 pool:2 dense:128 "
                        "dense:10 (206922 parameters), 4 replicas over 2 instances"), lines[1]
    assert lines[2] == ("train_torch: global batch 128 (4 x 32), sgd lr 0.1 cosine after 1 "
                        "warm-up epochs, images flipped, weight decay 0.0005, momentum 0.9; 1 "
                        "epochs of 32 steps"), lines[2]
    m = re.fullmatch(r"train_torch: test accuracy (0\.[0-9]{4}) \(([0-9]+)/10000\), test loss "
                     r"[0-9.]+", lines[-1])
    assert m, lines[-1]
    # One epoch over 4096 samples, all of it warm-up: well above chance.
    assert 0.5 < float(m.group(1)) < 0.95


def test_bad_options_are_usage_errors():
    r = run([PYTHON, TRAIN, "--epochs", "0"])
    assert r.returncode == 2 and "--epochs must be at least 1" in r.stderr, r.stderr
    r = run([PYTHON, TRAIN, "--quick", "--data", "/nonexistent"])
    assert r.returncode == 1
    assert r.stderr.strip() == ("train_torch: /nonexistent/train-images-idx3-ubyte(.gz): no "
                                "such file (install dataset-fashion-mnist)"), r.stderr
