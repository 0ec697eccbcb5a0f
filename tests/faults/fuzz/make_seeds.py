#!/usr/bin/env python3
"""Writes the committed seeds of the fuzz corpus (fuzz/corpus/<target>/) and the malformed
files of tests/faults/data/ that are built byte by byte. Run from anywhere; it rewrites the same
bytes each time. Layouts: gcl/src/transport/wire.h, examples/train/data/ckpt.h, examples/train/data/idx.h."""
import gzip
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')
DATA = os.path.join(HERE, '..', 'data')


def w(path, b):
    path = os.path.join(CORPUS, path) if not path.startswith('/') else path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(b)


# ---- wire: a mode byte (bit 0: lay the job's token in) + the 88-byte gcl_wire_header_t
def hdr(total=256, send=10, arrive=20, seq=0, coll=0, dtype=0, op=0, gkind=0, gsize=4, root=-1,
        algo=0x1234, reserved=0, count=64, token=b'\0' * 16):
    return (struct.pack('<QQQQQ', (7 << 32) | seq, 1, total, send, arrive) + token +
            struct.pack('<IBBBBiiIIQ', seq, coll, dtype, op, gkind, gsize, root, algo, reserved,
                        count))


assert len(hdr()) == 88
w('wire/allreduce-ok', b'\x01' + hdr())
w('wire/p2p-ok', b'\x01' + hdr(coll=0xff, gsize=0, total=12, count=3, dtype=3))
w('wire/broadcast-root1', b'\x01' + hdr(coll=3, root=1, gsize=2))
w('wire/stranger-token', b'\x00' + hdr(token=b'\xaa' * 16))
w('wire/short', b'\x01' + hdr()[:87])
w('wire/reserved-set', b'\x01' + hdr(reserved=1))
w('wire/odd-total', b'\x01' + hdr(total=255))
w('wire/time-reversed', b'\x01' + hdr(send=30, arrive=20))
w('wire/huge-group', b'\x01' + hdr(gsize=(1 << 20) + 1))

# ---- topology files
w('topology/readme-example', b"""# 32 IPUs in two ILDs of 16, joined by GW-Links
name my-pod
ipus 32
ild_size 16
wiring ladder
link 0 8 2
ipus_per_gateway 4
gwlinks_per_gateway 2
ipulink_bandwidth_gbs 32
ipulink_latency_ns 500
gwlink_bandwidth_gbs 12.5
gwlink_latency_ns 3000
sync_latency_ns 1000
gw_sync_latency_ns 5000
""")
w('topology/minimal', b"ipus 4\n")
w('topology/ring-3-ilds', b"ipus 12\nild_size 4\nwiring ring\nipus_per_gateway 2\n")
w('topology/full', b"ipus 8\nwiring full\n")
w('topology/single-ipu', b"ipus 1\nwiring none\n")
w('topology/too-many-ipus', b"ipus 2048\n")
w('topology/unknown-key', b"ipus 4\nfoo 1\n")
w('topology/repeated-key', b"ipus 4\nipus 8\n")
w('topology/link-across-ilds', b"ipus 8\nild_size 4\nlink 0 5\n")
w('topology/bad-decimal', b"ipus 4\nipulink_bandwidth_gbs 1.2345\n")
w('topology/control-byte', b"ipus 4\x01\n")
w('topology/long-line', b"ipus 4 #" + b"x" * 300 + b"\n")
w('topology/unreachable', b"ipus 4\nwiring none\n")


# ---- checkpoints: a mode byte (bit 0: fix the CRC) + the file
def ckpt(nlayers, dims, nstate, nparams=None, data=None):
    d = list(dims) + [0] * (17 - len(dims))
    if nparams is None:
        nparams = sum(dims[l + 1] * (dims[l] + 1) for l in range(nlayers))
    h = b'GCLTRAIN' + struct.pack('<II', 1, 512)
    h += struct.pack('<QQII', 5, nparams, nstate, nlayers) + struct.pack('<17I', *d)
    h += struct.pack('<III', 0, 1, 0) + struct.pack('<7d', 0.05, 0.9, 0.9, 0.999, 1e-8, 0, 256)
    h += struct.pack('<5Q', 0, 1, 32, 100, 64) + struct.pack('<4I', 1, 1, 32, 1)
    h = h.ljust(512, b'\0')
    if data is None:
        data = b''.join(struct.pack('<f', i * 0.25) for i in range((1 + nstate) * nparams))
    body = h + data
    return body + struct.pack('<I', zlib.crc32(body) & 0xffffffff)


good = ckpt(1, [2, 3], 1)
assert len(good) == 512 + 9 * 2 * 4 + 4
w('ckpt/valid', b'\x00' + good)
w('ckpt/valid-2layers', b'\x00' + ckpt(2, [4, 3, 2], 2))
w('ckpt/truncated', b'\x00' + good[:-10])
w('ckpt/flipped-bit', b'\x00' + good[:550] + bytes([good[550] ^ 1]) + good[551:])
w('ckpt/bad-magic', b'\x01' + b'GCLTRAIX' + good[8:])
w('ckpt/too-many-layers', b'\x01' + ckpt(17, [2] * 17, 0, nparams=0, data=b''))
w('ckpt/params-disagree', b'\x01' + ckpt(1, [2, 3], 0, nparams=10, data=b'\0' * 40))
# Malformed checkpoints for test_files.c (tests/faults/data/).
w(os.path.join(DATA, 'ckpt-valid.gclt'), good)
w(os.path.join(DATA, 'ckpt-truncated.gclt'), good[:-10])
w(os.path.join(DATA, 'ckpt-flipped-bit.gclt'), good[:550] + bytes([good[550] ^ 1]) + good[551:])
w(os.path.join(DATA, 'ckpt-params-disagree.gclt'), ckpt(1, [2, 3], 0, nparams=10, data=b'\0' * 40))
# ckpt_file_bytes() overflows: a header promising 2^62 parameters (layer 2^31-1 -> 2^31) in a
# 516-byte file with a right CRC. Not in the fuzz corpus: it crashes the target until fixed.
w(os.path.join(DATA, 'ckpt-size-overflow.gclt'),
  ckpt(1, [2 ** 31 - 1, 2 ** 31], 0, nparams=2 ** 62, data=b''))


# ---- IDX: a mode byte (bit 0: images, else labels; bits 1-6: items kept) + the file
def idx(ndims, dims, payload):
    return bytes([0, 0, 8, ndims]) + b''.join(struct.pack('>I', x) for x in dims) + payload


labels = idx(1, [3], bytes([1, 2, 3]))
images = idx(3, [2, 2, 3], bytes(range(12)))
w('idx/labels-plain', b'\x00' + labels)
w('idx/labels-gz', b'\x00' + gzip.compress(labels, mtime=0))
w('idx/images-plain', b'\x01' + images)
w('idx/images-gz-keep1', b'\x03' + gzip.compress(images, mtime=0))
w('idx/images-truncated', b'\x01' + images[:-3])
w('idx/labels-trailing', b'\x00' + labels + b'\x00')
w('idx/wrong-magic', b'\x00' + bytes([0, 0, 9, 1]) + labels[4:])
w('idx/corrupt-gz', b'\x00' + gzip.compress(labels, mtime=0)[:-6] + b'\xff' * 6)


# ---- malformed topology files and IDX files for test_files.c and bad_input.sh (tests/faults/data/)
TOPO = {
    'ok.topo': b"name ok-pod\nipus 8\nild_size 4\n",
    'too-many-ipus.topo': b"ipus 2048\n",
    'unknown-key.topo': b"ipus 4\ncolour blue\n",
    'repeated-key.topo': b"ipus 4\nipus 8\n",
    'missing-ipus.topo': b"wiring ring\n",
    'link-across-ilds.topo': b"ipus 8\nild_size 4\nlink 0 5\n",
    'bad-decimal.topo': b"ipus 4\nipulink_bandwidth_gbs 1.2345\n",
    'control-byte.topo': b"ipus 4\x01\n",
    'long-line.topo': b"ipus 4 #" + b"x" * 300 + b"\n",
    'unreachable.topo': b"ipus 4\nwiring none\n",
    'extra-value.topo': b"ipus 4 5\n",
    'negative.topo': b"ipus -4\n",
    'ild-not-dividing.topo': b"ipus 10\nild_size 4\n",
    'empty.topo': b"",
    'binary.topo': bytes(range(256)),
}
for name, body in TOPO.items():
    w(os.path.join(DATA, 'topo', name), body)
IDX = {
    'labels-ok.idx': labels,
    'labels-truncated.idx': labels[:-1],
    'labels-trailing.idx': labels + b'\x00',
    'labels-wrong-magic.idx': bytes([0, 0, 9, 1]) + labels[4:],
    'labels-zero-items.idx': idx(1, [0], b''),
    'images-huge-side.idx': idx(3, [1, 5000, 5000], b''),
    'labels-corrupt.gz': gzip.compress(labels, mtime=0)[:-6] + b'\xff' * 6,
    'labels-truncated.gz': gzip.compress(labels, mtime=0)[:-12],
    # A 24-byte file whose header claims 11776 images of 2303 x 3840 bytes (104 GB) (not a crash: see
    # test_files.c, idx-claim).
    'images-claim-104g.idx': bytes([0, 0, 8, 3, 0, 0, 0x2e, 0, 0, 0, 8, 0xff, 0, 0, 0xf, 0, 0, 0, 0, 0, 0, 0, 0, 8]),
}
for name, body in IDX.items():
    w(os.path.join(DATA, 'idx', name), body)
