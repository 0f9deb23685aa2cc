#!/usr/bin/env python3
"""tests/e2e/rewrite_checkpoint.py — provides: a reader and writer of mnist_ddp checkpoint files
written from the format's description alone (lib/checkpoint/checkpoint_file.hpp), to make
checkpoints with exactly one defect: a tensor dropped, added or with its first dimension
changed, a header nested too deep, or another format version. The payload is re-laid and the
CRC recomputed, so the file is otherwise well formed; with no option the copy is equivalent to
the original.

Format, little-endian throughout: magic "MDDPCKPT", uint32 format version, uint64 header length,
the JSON header (with "tensors": [{name, dtype, shape, offset, bytes}], offsets relative to the
payload), the payload, and a uint32 CRC-32 (zlib) of everything before it.

Usage: rewrite_checkpoint.py IN OUT [--drop NAME]... [--add NAME]... [--reshape NAME]...
                             [--nest DEPTH] [--version N]
"""
import argparse
import json
import struct
import sys
import zlib

MAGIC = b"MDDPCKPT"
PREAMBLE = struct.Struct("<8sIQ")  # magic, version, header length
TRAILER = struct.Struct("<I")  # CRC-32 of everything before it
ITEM_SIZE = {"float32": 4, "float64": 8, "int64": 8, "uint8": 1}


def read(path):
    """(version, header, {name: bytes}) of a checkpoint file, every length checked."""
    data = open(path, "rb").read()
    if len(data) < PREAMBLE.size + TRAILER.size:
        sys.exit(f"{path}: too short for a checkpoint")
    magic, version, header_length = PREAMBLE.unpack_from(data)
    if magic != MAGIC:
        sys.exit(f"{path}: no {MAGIC.decode()} signature")
    body = len(data) - TRAILER.size
    (crc,) = TRAILER.unpack_from(data, body)
    if crc != zlib.crc32(data[:body]):
        sys.exit(f"{path}: CRC-32 mismatch")
    payload_start = PREAMBLE.size + header_length
    if payload_start > body:
        sys.exit(f"{path}: header length exceeds the file")
    header = json.loads(data[PREAMBLE.size:payload_start])
    payload = data[payload_start:body]
    tensors = {}
    for entry in header["tensors"]:
        count = 1
        for dim in entry["shape"]:
            count *= dim
        start, size = entry["offset"], entry["bytes"]
        if size != count * ITEM_SIZE[entry["dtype"]] or start + size > len(payload):
            sys.exit(f"{path}: tensor '{entry['name']}' does not fit the file")
        tensors[entry["name"]] = payload[start:start + size]
    return version, header, tensors


def write(path, version, header, tensors, nest=0):
    """Writes the header's tensors in its order, contiguous from offset 0, and the CRC; with
    `nest`, the header gains a key "nested" holding arrays `nest` deep (written as text: Python's
    json recurses once per level)."""
    payload = b""
    for entry in header["tensors"]:
        entry["offset"] = len(payload)
        entry["bytes"] = len(tensors[entry["name"]])
        payload += tensors[entry["name"]]
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    if nest:
        text = text[:-1] + b',"nested":' + b"[" * nest + b"]" * nest + b"}"
    data = PREAMBLE.pack(MAGIC, version, len(text)) + text + payload
    with open(path, "wb") as f:
        f.write(data + TRAILER.pack(zlib.crc32(data)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--drop", action="append", default=[], metavar="NAME",
                        help="leave this tensor out")
    parser.add_argument("--add", action="append", default=[], metavar="NAME",
                        help="add a float32 tensor of shape [2] under this name")
    parser.add_argument("--nest", type=int, default=0, metavar="DEPTH",
                        help="add arrays nested DEPTH deep to the header")
    parser.add_argument("--reshape", action="append", default=[], metavar="NAME",
                        help="add 1 to this tensor's first dimension (zero-filled)")
    parser.add_argument("--version", type=int, help="write this format version")
    args = parser.parse_args()

    version, header, tensors = read(args.input)
    entries = {entry["name"]: entry for entry in header["tensors"]}
    for name in args.drop + args.reshape:
        if name not in entries:
            sys.exit(f"{args.input}: no tensor '{name}' (it holds {', '.join(entries)})")
    header["tensors"] = [e for e in header["tensors"] if e["name"] not in args.drop]
    for name in args.reshape:
        entry = entries[name]
        if not entry["shape"] or entry["shape"][0] == 0:
            sys.exit(f"{args.input}: '{name}' has no first dimension to grow")
        row = len(tensors[name]) // entry["shape"][0]  # bytes per index of the first dimension
        entry["shape"][0] += 1
        tensors[name] += bytes(row)
    for name in args.add:
        header["tensors"].append({"name": name, "dtype": "float32", "shape": [2]})
        tensors[name] = bytes(8)
    write(args.output, args.version if args.version is not None else version, header, tensors,
          args.nest)


if __name__ == "__main__":
    main()
