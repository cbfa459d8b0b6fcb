#!/usr/bin/env python3
"""How far per-value zstd shrinks short Chinese text: real sentences against W12's generated messages.

W12 in coffer-bench compresses chat messages one value at a time, with a dictionary trained on the first
5,000. This script measures the same per-value compression, in libzstd itself (ctypes, no Coffer code), on:

- real Chinese: every msgstr of 20-400 UTF-8 bytes holding a CJK ideograph in the zh_* gettext catalogs
  under /usr/share/locale (Debian's translators' sentences, each once; order shuffled with a fixed seed), one per
  value and, to match the generator's mean length, four per value;
- W12's messages: a port of Tools/coffer-bench/ChatGenerator.swift (seed 12, 100,000 messages; the
  character tables are read from the Swift file).

For each: the bytes of every value compressed alone at levels 1, 3 and 19, with no dictionary and with a
dictionary trained by ZDICT_trainFromBuffer (32 KiB on the first 5,000 values, as W12 does, and 110 KiB on
the first 8,000), counted as Coffer stores a value (CompressionCodec: a 2-byte header, the frame without
its magic number, dictionary id or checksum; the value as is when that is not smaller). Only the values after the
first 8,000 are measured, so no trainer saw them. Prints compressed bytes / original bytes. Needs libzstd.so.1 (libzstd-dev's runtime) and nothing else.

    python3 Tools/bench/zstd_chinese_text.py
"""

import ctypes
import glob
import gettext
import os
import random
import re

ZSTD = ctypes.CDLL("libzstd.so.1")
P, S = ctypes.c_void_p, ctypes.c_size_t
ZSTD.ZSTD_createCCtx.restype = P
ZSTD.ZSTD_freeCCtx.argtypes = [P]
ZSTD.ZSTD_CCtx_setParameter.restype = S
ZSTD.ZSTD_CCtx_setParameter.argtypes = [P, ctypes.c_int, ctypes.c_int]
ZSTD.ZSTD_CCtx_loadDictionary.restype = S
ZSTD.ZSTD_CCtx_loadDictionary.argtypes = [P, P, S]
ZSTD.ZSTD_compress2.restype = S
ZSTD.ZSTD_compress2.argtypes = [P, P, S, P, S]
ZSTD.ZSTD_isError.restype = ctypes.c_uint
ZSTD.ZSTD_isError.argtypes = [S]
COMPRESSION_LEVEL, CHECKSUM_FLAG, DICT_ID_FLAG = 100, 201, 202  # zstd.h's ZSTD_cParameter values
ZSTD.ZDICT_trainFromBuffer.restype = S
ZSTD.ZDICT_trainFromBuffer.argtypes = [P, S, P, P, ctypes.c_uint]
ZSTD.ZDICT_isError.restype = ctypes.c_uint
ZSTD.ZDICT_isError.argtypes = [S]

CJK = re.compile("[\u4e00-\u9fff]")


def real_chinese():
    values = []
    for path in sorted(glob.glob("/usr/share/locale/zh_*/LC_MESSAGES/*.mo")):
        try:
            with open(path, "rb") as file:
                catalog = gettext.GNUTranslations(file)._catalog
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        for text in catalog.values():
            if isinstance(text, str) and CJK.search(text) and 20 <= len(text.encode()) <= 400:
                values.append(text.encode())
    values = sorted(set(values))  # catalogs share many sentences: each counts once
    random.Random(1).shuffle(values)
    return values


def generated_messages(count=100_000, seed=12):
    source = open(os.path.join(os.path.dirname(__file__), "..", "coffer-bench", "ChatGenerator.swift")).read()
    chinese = list(re.search(r'static let chinese = Array\(\s*"([^"]*)"', source).group(1))
    words = re.findall(r'"([^"]*)"', re.search(r"static let words = \[(.*?)\]", source, re.S).group(1))
    emoji = re.findall(r'"([^"]*)"', re.search(r"static let emoji = \[(.*?)\]", source, re.S).group(1))
    state = seed

    def bounded(bound):
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (state >> 33) % bound

    messages = []
    for _ in range(count):
        target, body, length = 5 + bounded(196), "", 0
        while length < target:
            kind = bounded(10)
            if kind < 5:
                run = 2 + bounded(10)
                body += "".join(chinese[bounded(len(chinese))] for _ in range(run))
                length += run
            elif kind < 9:
                word = words[bounded(len(words))]
                body += " " + word + " "
                length += len(word) + 2
            else:
                body += emoji[bounded(len(emoji))]
                length += 1
        bounded(500)  # conversation
        bounded(1000)  # sender
        messages.append(body.encode())
    return messages


def train(samples, capacity):
    joined = ctypes.create_string_buffer(b"".join(samples))
    sizes = (S * len(samples))(*[len(sample) for sample in samples])
    dictionary = ctypes.create_string_buffer(capacity)
    size = ZSTD.ZDICT_trainFromBuffer(dictionary, capacity, joined, sizes, len(samples))
    if ZSTD.ZDICT_isError(size):
        raise RuntimeError("ZDICT_trainFromBuffer failed")
    return dictionary.raw[:size]


def stored_bytes(values, dictionary, level):
    """The bytes Coffer would store: a 2-byte header (kind, dictionary id) and the frame without its 4-byte
    magic number, dictionary id or checksum; the value itself when that is not smaller."""
    context = ZSTD.ZSTD_createCCtx()
    for parameter, value in ((COMPRESSION_LEVEL, level), (CHECKSUM_FLAG, 0), (DICT_ID_FLAG, 0)):
        ZSTD.ZSTD_CCtx_setParameter(context, parameter, value)
    ZSTD.ZSTD_CCtx_loadDictionary(context, dictionary, len(dictionary))  # kept for every frame after
    output = ctypes.create_string_buffer(8192)
    total = 0
    for value in values:
        size = ZSTD.ZSTD_compress2(context, output, len(output), value, len(value))
        if ZSTD.ZSTD_isError(size):
            raise RuntimeError("ZSTD_compress2 failed")
        total += min(2 + size - 4, len(value))
    ZSTD.ZSTD_freeCCtx(context)
    return total


def main():
    real = real_chinese()
    # Four sentences per value: about the generator's mean length, so that length is not the difference.
    joined = [b" ".join(real[start:start + 4]) for start in range(0, len(real) - 3, 4)]
    corpora = (("real Chinese (gettext zh_*)", real), ("real Chinese, four sentences a value", joined),
               ("W12 ChatGenerator", generated_messages()))
    for name, values in corpora:
        dictionaries = [("no dictionary", b""), ("32 KiB dictionary", train(values[:5000], 32768)),
                        ("110 KiB dictionary", train(values[:8000], 112640))]
        held_out = values[8000:]  # no value measured was seen by either trainer
        original = sum(map(len, held_out))
        print(f"{name}: {len(values)} values; {len(held_out)} held out, {original / len(held_out):.0f} bytes each")
        for label, dictionary in dictionaries:
            ratios = [stored_bytes(held_out, dictionary, level) / original for level in (1, 3, 19)]
            print(f"  {label:20} level 1 {ratios[0]:.3f}   level 3 {ratios[1]:.3f}   level 19 {ratios[2]:.3f}")


if __name__ == "__main__":
    main()
