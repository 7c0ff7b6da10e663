"""st_read.py - a safetensors reader in plain Python (standard library only).

Debian 12 has no python3-safetensors package, so this parses the format by
hand to show that the model's checkpoints are ordinary safetensors files:
8-byte little-endian header length, a JSON header mapping names to dtype /
shape / data_offsets (plus "__metadata__"), then raw little-endian tensors.
If the real `safetensors` package is importable, `--check` also loads the
file with it and compares.

  python3 bench/st_read.py FILE            # one line per tensor + metadata
  python3 bench/st_read.py --check FILE    # same, and cross-check with safetensors

Used by tests/test_model.c (format compatibility) and bench/torch_model.py
(loading C checkpoints into PyTorch).
"""
import array
import json
import math
import struct
import sys


def read(path):
    """Returns (metadata dict, {name: (shape list, flat list of floats)})."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("file shorter than 8 bytes")
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError("header length past end of file")
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    data = memoryview(blob)[8 + hlen:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            raise ValueError("%s: dtype %s, expected F32" % (name, info["dtype"]))
        begin, end = info["data_offsets"]
        numel = 1
        for s in info["shape"]:
            numel *= s
        if end - begin != 4 * numel or end > len(data):
            raise ValueError("%s: bad data_offsets" % name)
        vals = array.array("f")
        vals.frombytes(data[begin:end].tobytes())
        if sys.byteorder != "little":
            vals.byteswap()
        tensors[name] = (info["shape"], vals)
    return meta, tensors


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    if len(paths) != 1:
        print("usage: st_read.py [--check] FILE", file=sys.stderr)
        return 2
    meta, tensors = read(paths[0])
    for key in sorted(meta):
        print("meta %s %s" % (key, meta[key]))
    for name in sorted(tensors):
        shape, vals = tensors[name]
        total = math.fsum(vals)
        print("tensor %s %s %.6e" % (name, "x".join(str(s) for s in shape), total))
    if check:
        try:
            from safetensors.numpy import load_file  # optional
        except ImportError:
            print("note: python safetensors package not installed; hand parser only",
                  file=sys.stderr)
            return 0
        ref = load_file(paths[0])
        for name, (shape, vals) in tensors.items():
            arr = ref[name]
            if list(arr.shape) != list(shape) or abs(float(arr.sum()) - math.fsum(vals)) > 1e-3:
                print("mismatch with safetensors on %s" % name, file=sys.stderr)
                return 1
        print("safetensors package agrees on %d tensors" % len(tensors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
