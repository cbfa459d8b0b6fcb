#!/usr/bin/env python3
"""Generates Sources/CofferTokenizer/pinyin_table.h, the `coffer_pinyin` tokenizer's data, from Unicode's
Unihan database as Debian's `unicode-data` package installs it:

- Unihan_Readings.txt: every Mandarin reading of a Han character, the union of kMandarin, kHanyuPinyin,
  kXHC1983 and kTGHZ2013, with tone marks removed and ü written v (lǚ → lv), as users type it.
- Unihan_Variants.txt: kSimplifiedVariant, the simplified form a traditional character folds to (資 → 资).
  A character listed as its own simplified variant among others (乾 → 乾 干) is left alone.

The output is committed; the generator does not run in the build. A test regenerates it when the Unihan
files exist and compares (PinyinTokenizerTests).

Usage: generate-pinyin-table.py [--unihan DIR] [--output FILE]   (defaults: /usr/share/unicode, the
committed header). `--syllables` prints the syllable list instead.
"""
import argparse
import bz2
import os
import re
import sys
import unicodedata

READING_FIELDS = ("kMandarin", "kHanyuPinyin", "kXHC1983", "kTGHZ2013")
# The dense table covers CJK Unified Ideographs Extension A and the URO: 0x3400..0x9FFF.
DENSE_FIRST, DENSE_LAST = 0x3400, 0x9FFF


def open_text(directory, name):
    plain = os.path.join(directory, name)
    if os.path.exists(plain):
        return open(plain, encoding="utf-8")
    return bz2.open(plain + ".bz2", "rt", encoding="utf-8")


def version_of(directory, name):
    with open_text(directory, name) as lines:
        for line in lines:
            match = re.match(r"#\s*Unicode version:\s*(\S+)", line)
            if match:
                return match.group(1)
            if not line.startswith("#"):
                break
    return "unknown"


def toneless(reading):
    """`lǚ` → `lv`, `zhōng` → `zhong`, `ê̄` → `e`, `ňg` → `ng`."""
    out = []
    for ch in unicodedata.normalize("NFD", reading.lower()):
        if ch == "\u0308":  # diaeresis: the ü of lü, nü
            if out and out[-1] == "u":
                out[-1] = "v"
            continue
        if unicodedata.category(ch) == "Mn":
            continue
        out.append(ch)
    syllable = "".join(out)
    return syllable if re.fullmatch(r"[a-z]+", syllable) else None


def readings_of(value, field):
    if field == "kMandarin":
        return value.split()
    if field == "kHanyuPinyin":  # "10028.100:zhōng,zhòng 10030.010:…"
        return [r for entry in value.split() for r in entry.split(":", 1)[1].split(",")]
    # kXHC1983, kTGHZ2013: "1494.100:zhōng 1501.040:zhòng" (a location may carry a `*`)
    return [entry.split(":", 1)[1] for entry in value.split() if ":" in entry]


def load(directory):
    readings = {}
    with open_text(directory, "Unihan_Readings.txt") as lines:
        for line in lines:
            if line.startswith("#") or not line.strip():
                continue
            code, field, value = line.rstrip("\n").split("\t", 2)
            if field not in READING_FIELDS:
                continue
            cp = int(code[2:], 16)
            for reading in readings_of(value, field):
                syllable = toneless(reading)
                if syllable:
                    readings.setdefault(cp, set()).add(syllable)
    simplified = {}
    with open_text(directory, "Unihan_Variants.txt") as lines:
        for line in lines:
            if line.startswith("#") or not line.strip():
                continue
            code, field, value = line.rstrip("\n").split("\t", 2)
            if field != "kSimplifiedVariant":
                continue
            cp = int(code[2:], 16)
            targets = [int(v.split("<")[0][2:], 16) for v in value.split()]
            if cp in targets:
                continue
            simplified[cp] = targets[0]
    # A traditional character is found by its simplified form's readings too.
    for trad, simp in simplified.items():
        if simp in readings:
            readings.setdefault(trad, set()).update(readings[simp])
    return readings, simplified


def c_array(ctype, name, values, per_line=16):
    lines = [f"static const {ctype} {name}[{len(values)}] = {{"]
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(str(v) for v in values[i:i + per_line]) + ",")
    lines.append("};")
    return "\n".join(lines)


def generate(directory):
    readings, simplified = load(directory)
    version = version_of(directory, "Unihan_Readings.txt")
    syllables = sorted({s for values in readings.values() for s in values})
    ids = {s: i for i, s in enumerate(syllables)}
    # Reading sets, deduplicated, in a pool of uint16: the count, then syllable ids in order.
    pool = [0]  # offset 0: the empty set
    set_offsets = {}
    def set_offset(values):
        key = tuple(sorted(ids[s] for s in values))
        if key not in set_offsets:
            set_offsets[key] = len(pool)
            pool.append(len(key))
            pool.extend(key)
        return set_offsets[key]
    dense = [0] * (DENSE_LAST - DENSE_FIRST + 1)
    sparse = []
    for cp in sorted(readings):
        offset = set_offset(readings[cp])
        if DENSE_FIRST <= cp <= DENSE_LAST:
            dense[cp - DENSE_FIRST] = offset
        else:
            sparse.append((cp, offset))
    assert len(pool) < 65536 and len(syllables) < 65536
    names = "".join(s + "\\0" for s in syllables)
    name_offsets, at = [], 0
    for s in syllables:
        name_offsets.append(at)
        at += len(s) + 1
    fold = sorted(simplified.items())
    out = []
    out.append("// Generated by Tools/pinyin/generate-pinyin-table.py from Unihan (Unicode %s): do not edit." % version)
    out.append("// Readings: %s, tone marks removed, ü as v. Folding: kSimplifiedVariant." % ", ".join(READING_FIELDS))
    out.append("// %d characters with readings, %d syllables, %d reading sets, %d traditional→simplified pairs."
               % (len(readings), len(syllables), len(set_offsets), len(fold)))
    out.append("#ifndef COFFER_PINYIN_TABLE_H")
    out.append("#define COFFER_PINYIN_TABLE_H")
    out.append("")
    out.append('#define COFFER_PINYIN_UNICODE_VERSION "%s"' % version)
    out.append("#define COFFER_PINYIN_SYLLABLE_COUNT %d" % len(syllables))
    out.append("#define COFFER_PINYIN_DENSE_FIRST 0x%X" % DENSE_FIRST)
    out.append("#define COFFER_PINYIN_DENSE_LAST 0x%X" % DENSE_LAST)
    out.append("")
    out.append("/// The syllables, sorted, each NUL-terminated; coffer_pinyin_syllable_offsets[i] is the i-th one's start.")
    text_lines = ["static const char coffer_pinyin_syllable_text[] ="]
    chunk = ""
    for s in syllables:
        piece = s + "\\0"
        if len(chunk) + len(piece) > 100:
            text_lines.append('    "%s"' % chunk)
            chunk = ""
        chunk += piece
    text_lines.append('    "%s";' % chunk)
    out.append("\n".join(text_lines))
    out.append(c_array("unsigned short", "coffer_pinyin_syllable_offsets", name_offsets))
    out.append("/// Reading sets: at an offset, the number of syllables, then their indices (offset 0: none).")
    out.append(c_array("unsigned short", "coffer_pinyin_sets", pool))
    out.append("/// The reading set of each code point from COFFER_PINYIN_DENSE_FIRST to COFFER_PINYIN_DENSE_LAST.")
    out.append(c_array("unsigned short", "coffer_pinyin_dense", dense))
    # Sparse entries: code point << 14 | reading set offset (the pool is smaller than 2^14).
    assert len(pool) < (1 << 14) and all(cp < (1 << 18) for cp, _ in sparse)
    out.append("/// Code points outside the dense range with readings, sorted: code point << 14 | reading set offset.")
    out.append(c_array("unsigned int", "coffer_pinyin_sparse", [cp << 14 | o for cp, o in sparse], 8))
    # Folding: the traditional code point | the simplified one's plane << 18, then its low 16 bits.
    assert all(a < (1 << 18) and b < (1 << 18) for a, b in fold)
    out.append("/// Traditional → simplified, sorted: code point | (simplified >> 16) << 18, and simplified & 0xFFFF.")
    out.append(c_array("unsigned int", "coffer_pinyin_fold_from", [a | (b >> 16) << 18 for a, b in fold], 8))
    out.append(c_array("unsigned short", "coffer_pinyin_fold_to", [b & 0xFFFF for _, b in fold]))
    out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n", syllables


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--unihan", default="/usr/share/unicode")
    parser.add_argument("--output", default=os.path.join(here, "..", "..", "Sources", "CofferTokenizer", "pinyin_table.h"))
    parser.add_argument("--syllables", action="store_true")
    args = parser.parse_args()
    text, syllables = generate(args.unihan)
    if args.syllables:
        print("\n".join(syllables))
        return
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
