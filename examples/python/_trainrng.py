"""train's random numbers in Python, so that train_torch.py --model cnn draws exactly what
examples/train draws from the same --seed: the initial weights (model.c's model_init_layer),
each epoch's sample order (order.c's order_epoch) and which images are flipped
(order_flipped), and the pixels' standardisation (job.c). All of it is xoshiro256** seeded
through splitmix64 (examples/train/data/rng.h), one stream per use."""

import numpy as np

M64 = (1 << 64) - 1
PIXEL_MEAN, PIXEL_STD = np.float32(0.2860), np.float32(0.3530)


def _splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def _rotl(v, k):
    return ((v << k) | (v >> (64 - k))) & M64


class Rng:
    """rng.h's rng_t: stream STREAM of SEED."""

    def __init__(self, seed, stream):
        x = (seed ^ (stream * 0xD1342543DE82EF95)) & M64
        self.s = []
        for _ in range(4):
            x, z = _splitmix(x)
            self.s.append(z)

    def next(self):
        s = self.s
        result = (_rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def below(self, n):
        """rng_below: an integer in [0, n) without modulo bias (Lemire)."""
        m = (self.next() >> 32) * n
        if (m & 0xFFFFFFFF) < n:
            floor = ((1 << 32) - n) % n
            while (m & 0xFFFFFFFF) < floor:
                m = (self.next() >> 32) * n
        return m >> 32


def order_epoch(seed, epoch, n):
    """The order of N samples in EPOCH: order.c's Fisher-Yates shuffle."""
    r = Rng(seed, 0x5045524D00000000 + epoch)
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = r.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, dtype=np.int64)


def flips(seed, epoch, n):
    """order_flipped for samples 0..N-1 of EPOCH: the top bit of each sample's stream's first
    number. Only the second splitmix output of the seeding reaches it, so it is computed for all
    samples at once."""
    with np.errstate(over="ignore"):
        stream = np.uint64(0x464C495000000000 ^ (epoch << 32)) ^ np.arange(n, dtype=np.uint64)
        x = np.uint64(seed) ^ (stream * np.uint64(0xD1342543DE82EF95))
        for _ in range(2):
            x = x + np.uint64(0x9E3779B97F4A7C15)
            z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        v = z * np.uint64(5)
        v = (v << np.uint64(7)) | (v >> np.uint64(57))
        v = v * np.uint64(9)
    return (v >> np.uint64(63)).astype(bool)


def init_weights(seed, layer, nweights, fan_in):
    """model_init_layer's weights of layer LAYER (0-based, counting poolings), in its order:
    He-uniform, (2 u - 1) sqrt(6 / fan_in) in f32."""
    r = Rng(seed, 0x4C41594552 + layer)
    u = np.array([(r.next() >> 40) for _ in range(nweights)], dtype=np.float64)
    u = (u * (1.0 / 16777216.0)).astype(np.float32)
    bound = np.sqrt(np.float32(6.0) / np.float32(fan_in), dtype=np.float32)
    return ((np.float32(2.0) * u - np.float32(1.0)) * bound).astype(np.float32)


def pixels(images):
    """Standardised f32 pixels of uint8 IMAGES, as job.c's table maps each byte."""
    table = ((np.arange(256, dtype=np.float32) / np.float32(255.0)) - PIXEL_MEAN) / PIXEL_STD
    return table[images]
