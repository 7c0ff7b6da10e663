"""st_read.py - a safetensors reader in plain Python (standard library only).

Debian 12 has no python3-safetensors package, so this parses the format by
hand to show that the model's checkpoints are ordinary safetensors files:
8-byte little-endian header length, a JSON header mapping names to dtype /
shape / data_offsets (plus "__metadata__"), then raw little-endian tensors.
If the real `safetensors` package is importable, `--check` also loads the
file with it and compares.

  python3 bench/st_read.py FILE            # one line per tensor + metadata
  python3 bench/st_read.py --check FILE    # same, and cross-check with safetensors

F32, BF16 and F16 tensors are read (as fp32); `write` writes a file and
`read_hf_dir` reads a Hugging Face checkpoint directory (config.json plus
one or several safetensors files).

Used by tests/test_model.c (format compatibility) and bench/torch_model.py
(loading C and Hugging Face checkpoints into PyTorch).
"""
import array
import json
import math
import struct
import sys


def _half(h):
    """IEEE binary16 bits -> float."""
    s, e, m = h >> 15, (h >> 10) & 31, h & 1023
    if e == 0:
        v = math.ldexp(m, -24)
    elif e == 31:
        v = float("nan") if m else float("inf")
    else:
        v = math.ldexp(m | 1024, e - 25)
    return -v if s else v


def _to_f32(dtype, raw):
    """Raw little-endian tensor bytes of dtype F32, BF16 or F16 -> array('f')."""
    vals = array.array("f")
    if dtype == "F32":
        vals.frombytes(raw)
        if sys.byteorder != "little":
            vals.byteswap()
        return vals
    half = array.array("H")
    half.frombytes(raw)
    if sys.byteorder != "little":
        half.byteswap()
    if dtype == "BF16":
        wide = array.array("I", (h << 16 for h in half))
        vals.frombytes(wide.tobytes())
    else:
        vals.extend(_half(h) for h in half)
    return vals


SIZES = {"F32": 4, "BF16": 2, "F16": 2}


def write(path, tensors, metadata=None):
    """Writes a safetensors file: tensors maps name -> (dtype, shape, raw bytes)."""
    header, off, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for raw in blobs:
            f.write(raw)


def read_hf_dir(path):
    """A Hugging Face checkpoint directory: (config dict, {name: (shape, floats)})
    from model.safetensors or the shards of model.safetensors.index.json."""
    import os
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    single = os.path.join(path, "model.safetensors")
    if os.path.exists(single):
        files = [single]
    else:
        with open(os.path.join(path, "model.safetensors.index.json")) as f:
            index = json.load(f)
        files = [os.path.join(path, n) for n in dict.fromkeys(index["weight_map"].values())]
    tensors = {}
    for fp in files:
        tensors.update(read(fp)[1])
    return config, tensors


def read(path):
    """Returns (metadata dict, {name: (shape list, flat array of floats)});
    F32, BF16 and F16 tensors all come back as fp32."""
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
        if info["dtype"] not in SIZES:
            raise ValueError("%s: dtype %s, expected F32, BF16 or F16" % (name, info["dtype"]))
        begin, end = info["data_offsets"]
        numel = 1
        for s in info["shape"]:
            numel *= s
        if end - begin != SIZES[info["dtype"]] * numel or end > len(data):
            raise ValueError("%s: bad data_offsets" % name)
        tensors[name] = (info["shape"], _to_f32(info["dtype"], data[begin:end].tobytes()))
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
