#!/usr/bin/env python3
# tests/fuzz/make_seeds.py — provides: the seed corpus of each fuzz harness
# (tests/fuzz/corpus/<harness>/), written from the file formats spelled out here, so that each
# seed says what it is. Run it after a format change; scripts/fuzz.sh only reads the seeds.
# Seeds stay small (a few hundred bytes): libFuzzer mutates small inputs faster and better. The
# exception: fuzz_training_checkpoint's are real checkpoints of the linear model (31 KB of weights),
# as only tensors of the model's shapes get past the shape checks to the ones behind them.
import gzip
import json
import os
import shutil
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def idx(dims, payload, magic=(0, 0, 0x08, None)):
    """An IDX file: magic (type 0x08, len(dims) dimensions unless given), big-endian dims."""
    m = bytes(magic[:3]) + bytes([len(dims) if magic[3] is None else magic[3]])
    return m + b"".join(struct.pack(">I", d) for d in dims) + payload


def pattern(n):
    return bytes((i * 7 + 3) % 256 for i in range(n))


def gz(data):
    # mtime=0 keeps the seed the same on every run.
    return gzip.compress(data, mtime=0)


def checkpoint(meta, tensors, version=1, crc=True):
    """A checkpoint as lib/checkpoint/checkpoint_file.cpp writes it: "MDDPCKPT", version (u32 LE),
    header length (u64 LE), JSON header (keys sorted, no spaces), payload, CRC-32 (u32 LE)."""
    header, payload = dict(meta), b""
    header["tensors"] = []
    for name, dtype, shape, data in tensors:
        header["tensors"].append({"name": name, "dtype": dtype, "shape": shape,
                                  "offset": len(payload), "bytes": len(data)})
        payload += data
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = b"MDDPCKPT" + struct.pack("<IQ", version, len(text)) + text + payload
    return body + struct.pack("<I", zlib.crc32(body) if crc else 0)


def raw_checkpoint(header_text, payload):
    """A checkpoint around any header text, with a correct CRC."""
    body = b"MDDPCKPT" + struct.pack("<IQ", 1, len(header_text)) + header_text + payload
    return body + struct.pack("<I", zlib.crc32(body))


# The checkpoint tests/fuzz/fuzz_checkpoint_store.cpp writes beside each fuzzed manifest.
STORE_META = {"format": "mnist_ddp checkpoint", "world_size": 1, "training": {},
              "progress": {"epoch": 0, "step": 1, "position": 0, "loss_sum": 0.0,
                           "loss_count": 0, "images": 0}}
STORE_CHECKPOINT = checkpoint(STORE_META, [("w", "float32", [2], struct.pack("<2f", 1, -2)),
                                           ("b", "uint8", [1], b"\x09")])


# A training checkpoint as lib/checkpoint/training_checkpoint.cpp writes it, for the run that
# tests/fuzz/fuzz_training_checkpoint.cpp restores into: the default options (checkpoint_meta.cpp
# and training_shape) with SGD and momentum 0.9, or with Adam, on 60000 training images.
TRAINING = {"model": "linear", "optimizer": "sgd", "lr": 0.01, "momentum": 0.9,
            "weight_decay": 0.0, "batch_size": 64, "seed": 1, "normalize_mean": 0.1307,
            "normalize_std": 0.3081, "drop_last": False, "grad_accum": 1, "grad_dtype": "fp32",
            "train_images": 60000}
PROGRESS = {"epoch": 1, "step": 100, "position": 6400, "loss_sum": 23.5, "loss_count": 100,
            "images": 6400}
MERSENNE_N = 624
RNG_STATE_BYTES = 5056  # at::detail::getDefaultCPUGenerator().get_state().numel()


def float32s(shape, scale, offset=0):
    count = 1
    for d in shape:
        count *= d
    values = (((i * 37 + offset) % 101 - 50) * scale for i in range(count))
    return struct.pack(f"<{count}f", *values)


def rng_state(seed):
    """The bytes of LibTorch's CPU generator state (CPUGeneratorImplState, 5056 bytes on x86-64)
    right after seeding with `seed`, as get_state() writes it: the legacy POD (initial seed,
    left = 1, seeded = 1, next = 0, the 624 MT19937 words as uint64, three normal-sample doubles,
    normal_is_valid, padding), then the float normal sample and its flag, padding."""
    words = [seed & 0xffffffff]
    for i in range(1, MERSENNE_N):
        words.append((1812433253 * (words[-1] ^ (words[-1] >> 30)) + i) & 0xffffffff)
    legacy = struct.pack(f"<QiiQ{MERSENNE_N}Q3di4x", seed, 1, 1, 0, *words, 0.0, 0.0, 0.0, 0)
    state = legacy + struct.pack("<f?3x", 0.0, False)
    assert len(state) == RNG_STATE_BYTES, len(state)
    return state


def training_meta(optimizer, world_size=1, training=None, progress=None):
    """The header of a checkpoint of the run with `optimizer` ("sgd" or "adam")."""
    return {"format": "mnist_ddp checkpoint", "mnist_ddp_version": "0.1.0",
            "libtorch_version": "1.13.1", "world_size": world_size,
            "training": dict(TRAINING, optimizer=optimizer,
                             momentum=0.9 if optimizer == "sgd" else 0.0, **(training or {})),
            "progress": dict(PROGRESS, **(progress or {}))}


def training_tensors(optimizer, world_size=1):
    """The linear model (784 -> 10) after some steps: weights, the optimizer's state (SGD
    momentum buffers, or Adam step and moments), one RNG state per rank."""
    shapes = {0: [10, 784], 1: [10]}
    tensors = [("model/fc.weight", "float32", shapes[0], float32s(shapes[0], 1e-3)),
               ("model/fc.bias", "float32", shapes[1], float32s(shapes[1], 1e-2))]
    for i, shape in shapes.items():
        if optimizer == "sgd":
            tensors.append((f"optimizer/{i}/momentum_buffer", "float32", shape,
                            float32s(shape, 1e-4, offset=i)))
        else:
            tensors += [(f"optimizer/{i}/step", "int64", [], struct.pack("<q", 100)),
                        (f"optimizer/{i}/exp_avg", "float32", shape,
                         float32s(shape, 1e-4, offset=i)),
                        (f"optimizer/{i}/exp_avg_sq", "float32", shape,
                         float32s(shape, 1e-6, offset=50 + i))]
    tensors.append(("rng_states", "uint8", [world_size, RNG_STATE_BYTES],
                    b"".join(rng_state(rank + 1) for rank in range(world_size))))
    return tensors


def changed(tensors, name, dtype=None, shape=None, data=None):
    """`tensors` with the entry `name` changed (or dropped when all three are None)."""
    out = []
    for entry in tensors:
        if entry[0] != name:
            out.append(entry)
        elif (dtype, shape, data) != (None, None, None):
            out.append((name, dtype or entry[1], entry[2] if shape is None else shape,
                        entry[3] if data is None else data))
    return out


def seeds():
    image = pattern(28 * 28)
    yield "fuzz_idx_file", {
        "labels_raw": idx([5], bytes([0, 9, 3, 7, 1])),
        "images_raw": idx([2, 28, 28], image + image[::-1]),
        "images_gz": gz(idx([1, 28, 28], image)),
        "four_dims_raw": idx([2, 1, 3, 2], pattern(12)),
        "labels_gz": gz(idx([3], bytes([1, 2, 3]))),
        "bad_magic": b"\x1f\x00\x08\x01" + struct.pack(">I", 1) + b"\x00",
        "float_type": idx([2], b"\x00" * 8, magic=(0, 0, 0x0D, None)),
        "zero_dims": idx([], b"", magic=(0, 0, 0x08, 0)),
        "five_dims": idx([1, 1, 1, 1, 1], b"\x00"),
        "zero_dim": idx([0, 28], b""),
        "truncated": idx([4, 4], pattern(10)),
        "trailing": idx([2], b"\x01\x02\x03"),
        "header_cut": idx([7, 28, 28], b"")[:9],
        # The fuzzer's first run stopped on this seed: 8 GB allocated before reading (oom).
        "huge_header": idx([65535, 65535, 2], b"\x00" * 16),
        "gz_truncated": gz(idx([20], pattern(20)))[:-6],
        "gz_garbage": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff",
    }
    ff = "\f"
    yield "fuzz_options", {
        "defaults": "",
        "every_kind": "--model\ncnn\n--epochs=2\n--batch-size\n128\n--lr\n0.05\n--drop-last\n"
                      "--grad-dtype=bf16\n--seed\n7\n--max-steps\n10\n--threads\n1",
        "checkpoints": "--checkpoint-dir\n/tmp/ck\n--checkpoint-every\n5\n--keep-last\n2\n"
                       "--resume\nauto\n--eval-only",
        "config_file": "--epochs\n3" + ff + "# a comment\nbatch-size = 32\nlr = 0.1\n"
                       "optimizer = adam\nnormalize-mean = 0.5\ndrop-last = true\n",
        "config_only": ff + "model = mlp\nmomentum = 0.9\nbucket-mb = 0.5\ngrad-accum = 4\n",
        "help": "--help",
        "version": "--version",
        "bad_number": "--epochs\nthree",
        "out_of_range": "--batch-size\n99999999999999999999",
        "nan": "--lr\nnan",
        "unknown": "--bogus\n1",
        "positional": "--epochs\n3\n7",
        "ambiguous": "--c\nx",
        "bad_config_key": ff + "color = red\n",
        "bad_config_syntax": ff + "[section\nlr 0.1\n=\n",
        "config_repeat": "--lr=0.2" + ff + "lr = 0.1\nlr = 0.3\n",
        "adam_momentum": "--optimizer=adam\n--momentum=0.5",
        # Found by the fuzzer: Boost's what() looped forever on a placeholder in the input.
        "placeholder_loop": "--model\ncnn\n--epochs=--c\nx3\n--batch-%original_token%size\n128",
        "placeholder_value": "--lr\n%value%",
        "placeholder_config": ff + "%canonical_option% = 1\n",
    }
    header = (b'{"step":7,"tensors":[{"bytes":8,"dtype":"float32","name":"w","offset":0,'
              b'"shape":[2]}]}')
    yield "fuzz_checkpoint_file", {
        "store_checkpoint": STORE_CHECKPOINT,
        "every_type": checkpoint(
            {"epoch": 3, "nested": {"list": [1, 2, 3]}},
            [("f32", "float32", [2, 2], struct.pack("<4f", 0, -0.0, 1.5, float("inf"))),
             ("f64", "float64", [1], struct.pack("<d", 0.1)),
             ("i64", "int64", [2], struct.pack("<2q", -1, 2**63 - 1)),
             ("u8", "uint8", [2, 1, 2], b"\x00\x01\xfe\xff"),
             ("scalar", "float32", [], struct.pack("<f", 2.75)),
             ("empty", "float32", [0], b""),
             ("empty_2d", "int64", [3, 0], b"")]),
        "no_tensors": checkpoint({"format": "mnist_ddp checkpoint"}, []),
        "bad_crc": checkpoint({"step": 1}, [("w", "uint8", [1], b"\x05")], crc=False),
        "newer_version": checkpoint({"step": 1}, [], version=2),
        "foreign": b"PK\x03\x04" + b"\x00" * 30,
        "past_payload": raw_checkpoint(header, b"\x00" * 4),
        "unknown_dtype": raw_checkpoint(header.replace(b"float32", b"bfloat16"), b"\x00" * 8),
        "negative_dim": raw_checkpoint(header.replace(b"[2]", b"[-2]"), b"\x00" * 8),
        "overflowing_shape": raw_checkpoint(
            header.replace(b"[2]", b"[4294967296,4294967296,4294967296]"), b"\x00" * 8),
        "zero_then_huge": raw_checkpoint(
            header.replace(b'"bytes":8', b'"bytes":0')
                  .replace(b"[2]", b"[0,4294967296,4294967296]"), b""),
        "not_json": raw_checkpoint(b"{not json", b""),
        "tensors_not_list": raw_checkpoint(b'{"tensors":7}', b""),
        "header_too_long": b"MDDPCKPT" + struct.pack("<IQ", 1, 2**63) + b"{}" + b"\x00" * 4,
        # Found by the fuzzer: get<int64_t>() of a number beyond 64 bits (a double) is undefined.
        "shape_beyond_64_bits": raw_checkpoint(
            header.replace(b"[2]", b"[418446744073709551615,4294967296]"), b"\x00" * 8),
        "fractional_shape": raw_checkpoint(header.replace(b"[2]", b"[2.5]"), b"\x00" * 8),
    }
    sgd, adam = training_tensors("sgd", world_size=2), training_tensors("adam")
    rng = sgd[-1][3]
    yield "fuzz_training_checkpoint", {
        # Intact: both restore, and the run takes a step.
        "sgd_momentum_2_ranks": checkpoint(training_meta("sgd", 2), sgd),
        "adam_1_rank": checkpoint(training_meta("adam"), adam),
        # Options of another run: refused before the tensors; restore_model still loads it.
        "other_run": checkpoint(training_meta("sgd", 2, training={"lr": 0.1}), sgd),
        "progress_text": checkpoint(training_meta("adam", progress={"step": "100"}), adam),
        # Issue "hostile checkpoints always exit 4": each of these ended with exit 1.
        "rng_float64": checkpoint(training_meta("sgd", 2), changed(
            sgd, "rng_states", "float64", [2, RNG_STATE_BYTES // 8], rng)),
        "rng_narrow": checkpoint(training_meta("sgd", 2), changed(
            sgd, "rng_states", shape=[2, 8], data=rng[:8] + rng[RNG_STATE_BYTES:][:8])),
        "rng_unseeded": checkpoint(training_meta("sgd", 2), changed(
            sgd, "rng_states", data=bytes(len(rng)))),
        "adam_step_two": checkpoint(training_meta("adam"), changed(
            adam, "optimizer/0/step", shape=[2], data=struct.pack("<2q", 1, 2))),
        "adam_step_float": checkpoint(training_meta("adam"), changed(
            adam, "optimizer/1/step", "float64", data=struct.pack("<d", 1.5))),
        "adam_no_step": checkpoint(training_meta("adam"), changed(adam, "optimizer/0/step")),
        "adam_no_exp_avg_sq": checkpoint(training_meta("adam"),
                                         changed(adam, "optimizer/1/exp_avg_sq")),
        "weight_float64": checkpoint(training_meta("sgd", 2), changed(
            sgd, "model/fc.bias", "float64", data=struct.pack("<10d", *range(10)))),
        "momentum_int64": checkpoint(training_meta("sgd", 2), changed(
            sgd, "optimizer/1/momentum_buffer", "int64", data=struct.pack("<10q", *range(10)))),
    }
    size, crc = len(STORE_CHECKPOINT), zlib.crc32(STORE_CHECKPOINT[:-4])
    good = {"format": "mnist_ddp checkpoint manifest", "step": 1, "epoch": 0,
            "test_accuracy": 0.5, "file": "ckpt-step-000000001.mddp", "bytes": size, "crc32": crc}

    def manifest(**changes):
        m = dict(good)
        for key, value in changes.items():
            if value is None:
                m.pop(key)
            else:
                m[key] = value
        return json.dumps(m, indent=2).encode() + b"\n"

    yield "fuzz_checkpoint_store", {
        "intact": manifest(),
        "wrong_size": manifest(bytes=size + 1),
        "wrong_crc": manifest(crc32=crc ^ 1),
        "no_file": manifest(file=None),
        "other_folder": manifest(file="../ckpt-step-000000001.mddp"),
        "names_itself": manifest(file="ckpt-step-000000001.json"),
        "missing_file": manifest(file="ckpt-step-000000002.mddp"),
        "bytes_as_text": manifest(bytes=str(size)),
        "crc_negative": manifest(crc32=-1),
        "bytes_beyond_64_bits": manifest(bytes=1e30),
        "names_parent": manifest(file="..", bytes=0, crc32=0),
        # The fuzzer's first run stopped on this seed: value() on an array threw type_error.
        "not_an_object": b"[1, 2, 3]\n",
        "not_json": b"{\"file\": \n",
        "empty": b"",
        "of_a_run": manifest(run="0123456789abcdef"),
        "run_as_number": manifest(run=7),
        "nested_deep": b"{\"bytes\": " + b"[" * 40 + b"]" * 40 + b"}\n",
    }


def main():
    for harness, files in seeds():
        folder = os.path.join(HERE, "corpus", harness)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for name, data in files.items():
            with open(os.path.join(folder, name), "wb") as out:
                out.write(data.encode() if isinstance(data, str) else data)
        print(f"{folder}: {len(files)} seeds")


if __name__ == "__main__":
    main()
