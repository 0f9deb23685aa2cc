#!/usr/bin/env python3
# tests/tensorboard/read_events.py — provides: a reader of TensorBoard event files written from
# the formats alone (TFRecord framing, CRC-32C, the protobuf wire format), with no protobuf
# package and none of our C++, so it checks our writer independently. Prints each scalar as
# "tag step value"; exits 1 on any framing, CRC or decoding error.
"""usage: read_events.py PATH...

Each PATH is an event file, or a folder whose files with "tfevents" in their names (what
TensorBoard loads) are read in name order. Prints one line per scalar, "tag step value", the
value as the shortest decimal that reads back as the same float32. Exits 0 when every record is
intact, 1 on the first damaged one (the message names the file, the record and the byte), 2 on
bad usage."""

import math
import os
import struct
import sys

# --- CRC-32C ----------------------------------------------------------------------------------

# Castagnoli, reflected: the polynomial 0x1EDC6F41 with its bits reversed.
_CRC32C_POLY = 0x82F63B78


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_CRC32C_POLY if crc & 1 else 0)
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _CRC32C_TABLE[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The CRC as TFRecord stores it (TensorFlow's lib/hash/crc32c.h)."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


# The CRC-32C check value; a wrong table would otherwise pass as "every file is damaged".
assert crc32c(b"123456789") == 0xE3069283


class EventFileError(Exception):
    """A damaged or unreadable event file; the message says where."""


# --- TFRecord framing -------------------------------------------------------------------------


def read_records(data):
    """The data of each record: uint64 length, masked CRC of the length, data, masked CRC of
    the data, all little-endian. Yields (offset, data)."""
    at = 0
    index = 0
    while at < len(data):
        where = f"record {index} at byte {at}"
        if len(data) - at < 12:
            raise EventFileError(f"{where}: header cut off ({len(data) - at} bytes left)")
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        if length_crc != masked_crc32c(data[at : at + 8]):
            raise EventFileError(f"{where}: length CRC mismatch")
        if length + 4 > len(data) - at - 12:
            raise EventFileError(
                f"{where}: {length} data bytes and a CRC announced, "
                f"{len(data) - at - 12} bytes follow"
            )
        body = data[at + 12 : at + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, at + 12 + length)
        if data_crc != masked_crc32c(body):
            raise EventFileError(f"{where}: data CRC mismatch")
        yield at, body
        at += 16 + length
        index += 1


# --- protobuf wire format ---------------------------------------------------------------------

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


def _varint(buf, at):
    value = 0
    for shift in range(0, 70, 7):
        if at >= len(buf):
            raise EventFileError("varint cut off")
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if value >> 64:
                raise EventFileError("varint longer than 64 bits")
            return value, at
    raise EventFileError("varint longer than 10 bytes")


def fields(buf):
    """(field number, wire type, value) of each field of a message: an int for varints, bytes
    for the rest (8 for fixed64, 4 for fixed32)."""
    at = 0
    while at < len(buf):
        key, at = _varint(buf, at)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise EventFileError("field number 0")
        if wire_type == VARINT:
            value, at = _varint(buf, at)
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if at + size > len(buf):
                raise EventFileError(f"field {number} cut off")
            value, at = buf[at : at + size], at + size
        elif wire_type == LENGTH_DELIMITED:
            size, at = _varint(buf, at)
            if at + size > len(buf):
                left = len(buf) - at
                raise EventFileError(f"field {number}: {size} bytes announced, {left} left")
            value, at = buf[at : at + size], at + size
        else:  # 3 and 4 are the deprecated groups, 6 and 7 do not exist
            raise EventFileError(f"field {number} has wire type {wire_type}")
        yield number, wire_type, value


def _expect(message, number, wire_type, expected):
    if wire_type != expected:
        raise EventFileError(
            f"{message} field {number} has wire type {wire_type}, expected {expected}"
        )


def _text(raw, what):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EventFileError(f"{what} is not UTF-8: {error}") from None


# Field numbers of TensorFlow's event.proto and summary.proto.
EVENT_WALL_TIME, EVENT_STEP, EVENT_FILE_VERSION, EVENT_SUMMARY = 1, 2, 3, 5
SUMMARY_VALUE = 1
VALUE_TAG, VALUE_SIMPLE_VALUE = 1, 2
VALUE_OTHER_KINDS = (3, 4, 5, 6, 8)  # histogram (old), image, histo, audio, tensor


def decode_value(buf):
    """(tag, float or None): None for a value of another kind than simple_value."""
    tag, simple_value, other_kind = None, None, False
    for number, wire_type, value in fields(buf):
        if number == VALUE_TAG:
            _expect("Summary.Value", number, wire_type, LENGTH_DELIMITED)
            tag = _text(value, "tag")
        elif number == VALUE_SIMPLE_VALUE:
            _expect("Summary.Value", number, wire_type, FIXED32)
            (simple_value,) = struct.unpack("<f", value)
        elif number in VALUE_OTHER_KINDS:
            other_kind = True
    if tag is None:
        raise EventFileError("Summary.Value without a tag")
    if simple_value is None and not other_kind:
        # A proto3 float outside a oneof is left out when it is 0; TensorBoard drops such values.
        raise EventFileError(f"Summary.Value {tag!r} holds no value")
    return tag, simple_value


def decode_event(buf):
    """{"wall_time", "step", "file_version" (or None), "values" (list of (tag, float), or
    None when the event carries no summary)}."""
    event = {"wall_time": 0.0, "step": 0, "file_version": None, "values": None}
    for number, wire_type, value in fields(buf):
        if number == EVENT_WALL_TIME:
            _expect("Event", number, wire_type, FIXED64)
            (event["wall_time"],) = struct.unpack("<d", value)
        elif number == EVENT_STEP:
            _expect("Event", number, wire_type, VARINT)
            event["step"] = value - (1 << 64) if value >> 63 else value  # int64, two's complement
        elif number == EVENT_FILE_VERSION:
            _expect("Event", number, wire_type, LENGTH_DELIMITED)
            event["file_version"] = _text(value, "file_version")
        elif number == EVENT_SUMMARY:
            _expect("Event", number, wire_type, LENGTH_DELIMITED)
            event["values"] = event["values"] or []
            for summary_number, summary_type, summary_value in fields(value):
                if summary_number == SUMMARY_VALUE:
                    _expect("Summary", summary_number, summary_type, LENGTH_DELIMITED)
                    event["values"].append(decode_value(summary_value))
    return event


# --- files ------------------------------------------------------------------------------------


def format_float32(value):
    """The shortest decimal that reads back as the same float32 (0.1, not 0.10000000149)."""
    if math.isnan(value) or math.isinf(value):
        return repr(value)
    for digits in range(1, 10):
        text = "%.*g" % (digits, value)
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
            return text
    return repr(value)


def read_file(path):
    """The scalars of one event file as (tag, step, value); raises EventFileError or OSError."""
    with open(path, "rb") as file:
        return read_file_bytes(file.read())


def read_file_bytes(data):
    """The scalars of the event file `data` as (tag, step, value); raises EventFileError."""
    scalars = []
    first = True
    for at, body in read_records(data):
        try:
            event = decode_event(body)
        except EventFileError as error:
            raise EventFileError(f"record at byte {at}: {error}") from None
        if first and not (event["file_version"] or "").startswith("brain.Event:"):
            raise EventFileError("the first record is no file_version event")
        first = False
        for tag, value in event["values"] or []:
            if value is not None:
                scalars.append((tag, event["step"], value))
    if first:
        raise EventFileError("no records")
    return scalars


def event_files(path):
    if not os.path.isdir(path):
        return [path]
    names = sorted(name for name in os.listdir(path) if "tfevents" in name)
    if not names:
        raise EventFileError("no event files (names with 'tfevents') in the folder")
    return [os.path.join(path, name) for name in names]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv[1:]:
        try:
            files = event_files(path)
        except (EventFileError, OSError) as error:
            print(f"read_events.py: {path}: {error}", file=sys.stderr)
            return 1
        for file in files:
            try:
                scalars = read_file(file)
            except (EventFileError, OSError) as error:
                print(f"read_events.py: {file}: {error}", file=sys.stderr)
                return 1
            for tag, step, value in scalars:
                print(f"{tag} {step} {format_float32(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
