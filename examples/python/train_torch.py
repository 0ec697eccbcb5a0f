#!/usr/bin/env python3
"""Data-parallel PyTorch training on simulated IPUs: an MLP or a CNN on Fashion-MNIST.

    poprun --num-replicas 8 --num-instances 2 python3 examples/python/train_torch.py
    poprun --num-replicas 16 --num-instances 4 python3 examples/python/train_torch.py --model cnn

Every local simulated IPU (one thread each) holds a replica of the model. Each step takes the
next global batch of the epoch's sample order (the same on every replica, from --seed); replica r
trains on its r-th share, and the gradients, which backward writes into one flat buffer, are
all-reduced (mean) in place through gcl. Every replica applies the same update to a result gcl
makes bitwise the same everywhere, so the weights stay identical; after every epoch a digest of
them is all-gathered and compared, and a run whose replicas differ stops with "replicas
diverged". Each layer's FLOPs and bytes are charged to the simulated IPU, so the run also
reports the simulated step time on the job's pod, as examples/train does. Instance 0 prints.

--model cnn is train's default CNN (examples/train/model/cnn.c) in torch, trained as train trains it:
conv 3x3 to 16 channels, ReLU, 2x2 max pooling, conv 3x3 to 32, ReLU, pooling, dense 128, ReLU,
dense 10; He-uniform weights and zero biases; 20 epochs of SGD with momentum 0.9 and weight
decay 0.0005 on the weights, lr 0.1 after one epoch of linear warm-up, cosine to 0; each
training image mirrored left to right with probability 1/2 per epoch. It is the reference
train's CNN is compared against (docs/train.md), and it draws from train's own generator
(_trainrng.py): the same initial weights, sample order, flips and pixel standardisation from
--seed, so that the two differ only in how their arithmetic rounds.
"""

import os

# One BLAS thread per calling thread, set before numpy and torch load OpenBLAS: every simulated
# IPU is a thread that runs its own matmuls, and OpenBLAS's own pool, shared by all of them,
# otherwise makes them wait for each other several times longer than they compute.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402 (after the variables above)
import copy
import threading
import gzip
import hashlib
import math
import struct
import sys
import time

from _require import require  # noqa: E402
require("numpy", "torch", "gcl")  # or re-run under Debian's python3, which has them

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import gcl  # noqa: E402
import popdist  # noqa: E402
import _trainrng  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
CNN_WD = 0.0005  # train's --weight-decay for its CNN (examples/train/model/cnn.c)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp",
                   help="mlp (default) or cnn, train's default CNN")
    p.add_argument("--epochs", type=int,
                   help="passes over the data (default 8, cnn 20; 1 with --quick)")
    p.add_argument("--batch-size", type=int, default=32, help="samples per replica per step")
    p.add_argument("--lr", type=float, help="SGD learning rate, cosine decay (default 0.05; cnn 0.1)")
    p.add_argument("--warmup-epochs", type=int,
                   help="epochs of linear learning-rate warm-up (default 0; cnn 1)")
    p.add_argument("--augment", choices=("none", "flip"),
                   help="flip: mirror each training image with probability 1/2 (default none; "
                        "cnn flip)")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    p.add_argument("--weight-decay", type=float,
                   help="L2 on the weights, not the biases, as train's (default 0; cnn 0.0005)")
    p.add_argument("--hidden", default="256,128", help="MLP hidden layer widths (default 256,128)")
    p.add_argument("--seed", type=int, default=1, help="weights and sample order")
    p.add_argument("--data", default=DATA, help=f"Fashion-MNIST IDX files (default {DATA})")
    p.add_argument("--replicas", type=int, default=4, help="replicas without poprun")
    p.add_argument("--train-samples", type=int, default=0,
                   help="use only the first N training samples (0: all)")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: 4096 training samples, 1 epoch unless --epochs")
    a = p.parse_args(argv)
    if a.quick:
        a.train_samples = a.train_samples or 4096
    cnn = a.model == "cnn"
    if a.epochs is None:
        a.epochs = 1 if a.quick else 20 if cnn else 8
    if a.lr is None:
        a.lr = 0.1 if cnn else 0.05
    if a.warmup_epochs is None:
        a.warmup_epochs = 1 if cnn else 0
    if a.augment is None:
        a.augment = "flip" if cnn else "none"
    if a.weight_decay is None:
        a.weight_decay = CNN_WD if cnn else 0.0
    try:
        a.hidden = [int(w) for w in a.hidden.split(",") if w]
    except ValueError:
        p.error(f"--hidden {a.hidden!r}: expected widths like 256,128")
    for name in ("epochs", "batch_size", "replicas"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.train_samples < 0 or any(w < 1 for w in a.hidden) or not a.lr > 0 or a.warmup_epochs < 0:
        p.error("--train-samples, --hidden, --lr and --warmup-epochs must be positive")
    return a


def read_idx(path):
    """An IDX file (gzip'd or not) as a numpy uint8 array of its dimensions."""
    for name in (path, path + ".gz"):
        if os.path.exists(name):
            break
    else:
        sys.exit(f"train_torch: {path}(.gz): no such file (install dataset-fashion-mnist)")
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(name, "rb") as f:
            raw = f.read()
        zero, kind, ndim = struct.unpack(">HBB", raw[:4])
        dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
        if zero != 0 or kind != 0x08 or len(raw) != 4 + 4 * ndim + math.prod(dims):
            raise ValueError("not an IDX file of unsigned bytes, or truncated")
    except (OSError, ValueError, struct.error, EOFError) as e:
        sys.exit(f"train_torch: {name}: {e}")
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_data(directory, train_samples, as_train=False):
    """Standardised float32 images (N x 784) and int64 labels of the training and test sets:
    by the training set's own mean and deviation, or (AS_TRAIN) as train does."""
    sets = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        x = read_idx(os.path.join(directory, f"{prefix}-images-idx3-ubyte"))
        y = read_idx(os.path.join(directory, f"{prefix}-labels-idx1-ubyte"))
        if len(x) != len(y):
            sys.exit(f"train_torch: {split} set: {len(x)} images but {len(y)} labels")
        x = x.reshape(len(x), -1)
        sets[split] = [_trainrng.pixels(x) if as_train else x.astype(np.float32) / 255,
                       y.astype(np.int64)]
    if train_samples:
        sets["train"] = [a[:train_samples] for a in sets["train"]]
    mean, std = sets["train"][0].mean(), sets["train"][0].std()
    for s in sets.values():
        s[0] = torch.from_numpy(s[0] if as_train else (s[0] - mean) / std)
        s[1] = torch.from_numpy(s[1])
    return sets


def build_model(dims, seed):
    torch.manual_seed(seed)
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


# train's default CNN on 28 x 28 x 1 images: (kind, channels or outputs, kernel).
CNN = [("conv", 16, 3), ("pool", 0, 2), ("conv", 32, 3), ("pool", 0, 2), ("dense", 128, 0),
       ("dense", 10, 0)]


def build_cnn(seed):
    """train's CNN with train's initial weights from SEED (He-uniform, bound sqrt(6 / fan-in),
    from its generator, in its NHWC order turned into torch's NCHW), zero biases. Also each
    layer's FLOPs and activation bytes per sample and its weight bytes, for the simulated
    cost."""
    layers, costs, c, hw, flat = [], [], 1, 28, False
    inits = []  # (module, train's layer index, train's weight shape, the axes to torch's)
    for i, (kind, out, k) in enumerate(CNN):
        last = i == len(CNN) - 1
        if kind == "conv":
            layers.append(torch.nn.Conv2d(c, out, k, padding=k // 2))
            inits.append((layers[-1], i, (out, k, k, c), (0, 3, 1, 2)))
            costs.append((2.0 * hw * hw * k * k * c * out, 4.0 * hw * hw * (c + 2 * out),
                          4.0 * k * k * c * out))
            c = out
        elif kind == "pool":
            layers.append(torch.nn.MaxPool2d(k))
            costs.append((0.0, 4.0 * hw * hw * c * 1.25, 0.0))
            hw //= k
            continue
        else:
            shape = (out, c) if flat else (out, hw, hw, c)  # train's dense input is NHWC
            if not flat:
                layers.append(torch.nn.Flatten())
                c, hw, flat = c * hw * hw, 1, True
            layers.append(torch.nn.Linear(c, out))
            inits.append((layers[-1], i, shape, (0, 3, 1, 2) if len(shape) == 4 else (0, 1)))
            costs.append((2.0 * c * out, 4.0 * (c + 2 * out), 4.0 * c * out))
            c = out
        if not last:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    with torch.no_grad():
        for m, index, shape, to_torch in inits:
            n, fan_in = m.weight.numel(), m.weight[0].numel()
            w = _trainrng.init_weights(seed, index, n, fan_in).reshape(shape)
            m.weight.copy_(torch.from_numpy(np.ascontiguousarray(
                w.transpose(to_torch))).reshape(m.weight.shape))
            m.bias.zero_()
    return model, costs


class Job:
    """What every IPU's program shares: options, data, the initial model, per-replica results."""

    def __init__(self, args, data, dims, replicas, local_replicas):
        self.args, self.data, self.dims, self.replicas = args, data, dims, replicas
        if args.model == "cnn":
            self.model, self.costs = build_cnn(args.seed)
        else:
            self.model = build_model(dims, args.seed)
            self.costs = [(2.0 * dims[i] * dims[i + 1], 4.0 * (dims[i] + 2 * dims[i + 1]),
                           4.0 * dims[i] * dims[i + 1]) for i in range(len(dims) - 1)]
        self.global_batch = replicas * args.batch_size
        self.steps_per_epoch = len(data["train"][1]) // self.global_batch
        if self.steps_per_epoch < 1:
            sys.exit(f"train_torch: {len(data['train'][1])} training samples do not fill one "
                     f"global batch of {self.global_batch}")
        self.steps = self.steps_per_epoch * args.epochs
        self.local_replicas = local_replicas
        self.report = {}
        self.epochs, self.lock = {}, threading.Lock()

    def epoch_draws(self, epoch):
        """The CNN's sample order and flips of EPOCH, train's (made once, for every replica)."""
        with self.lock:
            if epoch not in self.epochs:
                a, n = self.args, len(self.data["train"][1])
                order = torch.from_numpy(_trainrng.order_epoch(a.seed, epoch, n))
                flips = torch.from_numpy(_trainrng.flips(a.seed, epoch, n))
                self.epochs = {epoch: (order, flips if a.augment == "flip" else None)}
            return self.epochs[epoch]


class Replica:
    """One replica's model, its gradients as views of one flat buffer, and its optimizer."""

    def __init__(self, job, ctx):
        self.job, self.ctx, self.comm = job, ctx, ctx.comm()
        self.model = copy.deepcopy(job.model)
        params = list(self.model.parameters())
        self.flat = torch.zeros(sum(p.numel() for p in params))
        at = 0
        for p in params:  # backward accumulates into these views: the flat buffer is the grads
            p.grad = self.flat[at:at + p.numel()].view_as(p)
            at += p.numel()
        self.flat_np = self.flat.numpy()
        a = job.args
        if a.weight_decay:  # on the weights, not the biases, as train's
            params = [{"params": [p for p in params if p.dim() > 1],
                       "weight_decay": a.weight_decay},
                      {"params": [p for p in params if p.dim() <= 1]}]
        self.opt = torch.optim.SGD(params, lr=a.lr, momentum=a.momentum)

    def charge(self, rows, backward):
        """Charges the layers' FLOPs (2 m n k per matmul; twice that backward) and bytes."""
        k = 2 if backward else 1
        for flops, act_bytes, weight_bytes in self.job.costs:
            self.ctx.charge_compute("backward" if backward else "forward", k * rows * flops,
                                    k * (rows * act_bytes + weight_bytes))
        if backward:  # the SGD update with momentum: read and write weights, grads and state
            n = float(self.flat.numel())
            self.ctx.charge_compute("optimizer", 4 * n, 20 * n)

    def step(self, order, step, lr, flips):
        """One training step; returns (loss sum, correct, samples) of this replica's share.
        FLIPS (None: no augmentation) says which training images are mirrored this epoch."""
        job, b = self.job, self.job.args.batch_size
        at = (step % job.steps_per_epoch) * job.global_batch + self.ctx.replica * b
        idx = order[at:at + b]
        x, y = job.data["train"][0][idx], job.data["train"][1][idx]
        if flips is not None:
            mirrored = x.reshape(b, 28, 28).flip(2).reshape(x.shape)
            x = torch.where(flips[idx].reshape([b] + [1] * (x.dim() - 1)), mirrored, x)
        self.flat.zero_()
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        self.ctx.host_exchange()  # the micro-batch in and the loss out, as train charges it
        self.charge(b, backward=False)
        self.charge(b, backward=True)
        self.comm.all_reduce(self.flat_np, op="mean")  # in place, on the grads themselves
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.step()
        correct = int((logits.argmax(1) == y).sum())
        return float(loss) * b, correct, b

    def digest(self):
        """The first 8 bytes of a SHA-256 of the weights, as one uint64."""
        h = hashlib.sha256()
        for p in self.model.parameters():
            h.update(p.detach().numpy().tobytes())
        return np.frombuffer(h.digest()[:8], np.uint64).copy()

    def evaluate(self):
        """(loss sum, correct, samples) over this replica's share of the test set."""
        x, y = self.job.data["test"]
        share = slice(self.ctx.replica, None, self.job.replicas)
        with torch.no_grad():
            logits = self.model(x[share])
            loss = F.cross_entropy(logits, y[share], reduction="sum")
        self.charge(len(y[share]), backward=False)
        return float(loss), int((logits.argmax(1) == y[share]).sum()), len(y[share])


def totals(comm, loss, correct, count):
    """Sums over the replicas: (loss, correct, count)."""
    f = comm.all_reduce(np.array([loss], np.float32), np.empty(1, np.float32), op="sum")
    n = comm.all_reduce(np.array([correct, count], np.int64), np.empty(2, np.int64), op="sum")
    return float(f[0]), int(n[0]), int(n[1])


def check_identical(r, epoch):
    """Every replica's weights are bitwise the same as replica 0's, or the run stops."""
    digests = r.comm.all_gather(r.digest())
    if not (digests == digests[0]).all():
        odd = [i for i, d in enumerate(digests) if d != digests[0]]
        raise RuntimeError(f"replicas diverged after epoch {epoch}: the weights of replicas "
                           f"{odd} differ from replica 0's")


def train_epoch(r, epoch, step_times):
    """One epoch; returns its (mean loss, train accuracy) over all replicas."""
    job, a = r.job, r.job.args
    if a.model == "cnn":  # train's draws
        order, flips = job.epoch_draws(epoch)
    else:
        order = torch.from_numpy(np.random.RandomState(a.seed * 1000 + epoch)
                                 .permutation(len(job.data["train"][1])))
        flips = None
        if a.augment == "flip":  # one coin per image and epoch, the same on every replica
            g = torch.Generator().manual_seed(a.seed * 1000 + epoch + 500)
            flips = torch.rand(len(job.data["train"][1]), generator=g) < 0.5
    warm = a.warmup_epochs * job.steps_per_epoch
    loss = correct = seen = 0
    for s in range(job.steps_per_epoch):
        step = epoch * job.steps_per_epoch + s
        if step < warm:  # linear warm-up, then cosine to 0, as train's optim_lr
            lr = a.lr * (step + 1) / warm
        else:
            lr = 0.5 * a.lr * (1 + math.cos(math.pi * (step - warm) / (job.steps - warm)))
        t0 = r.ctx.sim_time()
        l, c, n = r.step(order, step, lr, flips)
        step_times.append(r.ctx.sim_time() - t0)
        loss, correct, seen = loss + l, correct + c, seen + n
    loss, correct, seen = totals(r.comm, loss, correct, seen)
    return loss / seen, correct / seen


def program(ctx, job):
    """The per-IPU program: train, check the replicas agree every epoch, evaluate."""
    r = Replica(job, ctx)
    talk = ctx.replica == 0
    step_times, t_train = [], 0.0
    for epoch in range(job.args.epochs):
        t0 = time.monotonic()
        loss, acc = train_epoch(r, epoch, step_times)
        t_train += time.monotonic() - t0
        check_identical(r, epoch + 1)
        tl, tc, tn = totals(r.comm, *r.evaluate())
        if talk:
            print(f"epoch {epoch + 1}/{job.args.epochs} done: loss {loss:.4f} train_acc "
                  f"{acc:.4f} test_acc {tc / tn:.4f} test_loss {tl / tn:.4f} "
                  f"({time.monotonic() - t0:.1f} s)", flush=True)
    if talk:
        job.report.update(test_correct=tc, test_samples=tn, test_loss=tl / tn, train_s=t_train,
                          sim_step_s=float(np.median(step_times)),
                          sim_peak=ctx.sim_stats().memory_peak)


def print_report(job, inst, t_start):
    rep, a = job.report, job.args
    samples = job.steps * job.global_batch
    print(f"train_torch: {job.steps} steps of {job.global_batch} samples in "
          f"{rep['train_s']:.1f} s of training: {samples / rep['train_s']:.0f} samples/s real "
          f"({time.monotonic() - t_start:.1f} s in all, with loading and evaluation)")
    step = rep["sim_step_s"]
    print(f"train_torch: simulated on {inst.topology} ({inst.topology_ipus} IPUs): "
          f"{step * 1e6:.1f} us per step, {job.global_batch / step:.0f} samples/s")
    print(f"train_torch: test accuracy {rep['test_correct'] / rep['test_samples']:.4f} "
          f"({rep['test_correct']}/{rep['test_samples']}), test loss {rep['test_loss']:.4f}",
          flush=True)


def main(argv):
    t_start = time.monotonic()
    args = parse_args(argv)
    # Each IPU thread runs its own ops: one intra-op thread, so that 8 replicas on a few cores
    # do not each start a pool of as many threads as there are cores.
    torch.set_num_threads(1)
    data = load_data(args.data, args.train_samples, as_train=args.model == "cnn")
    if args.model == "cnn":  # images as 1 x 28 x 28
        for part in data.values():
            part[0] = part[0].reshape(-1, 1, 28, 28)
    with gcl.init(replicas=args.replicas) as inst:
        info = inst.info
        dims = [784] + args.hidden + [10]
        job = Job(args, data, dims, info.num_replicas, info.num_local_replicas)
        talk = popdist.getInstanceIndex() == 0
        if talk:
            print(f"train_torch: {len(data['train'][1])} training and {len(data['test'][1])} "
                  f"test samples from {args.data}")
            name = (f"MLP {'-'.join(map(str, dims))}" if args.model == "mlp" else "CNN 28x28x1 "
                    "conv:16:3 pool:2 conv:32:3 pool:2 dense:128 dense:10")
            print(f"train_torch: {name} "
                  f"({sum(p.numel() for p in job.model.parameters())} parameters), "
                  f"{info.num_replicas} replicas over {info.num_instances} instances")
            extra = f" after {args.warmup_epochs} warm-up epochs" if args.warmup_epochs else ""
            extra += ", images flipped" if args.augment == "flip" else ""
            extra += f", weight decay {args.weight_decay:g}" if args.weight_decay else ""
            print(f"train_torch: global batch {job.global_batch} ({info.num_replicas} x "
                  f"{args.batch_size}), sgd lr {args.lr:g} cosine{extra}, momentum "
                  f"{args.momentum:g}; {args.epochs} epochs of {job.steps_per_epoch} steps",
                  flush=True)
        inst.run(program, job)
        if talk:
            print_report(job, inst, t_start)


if __name__ == "__main__":
    main(sys.argv[1:])
