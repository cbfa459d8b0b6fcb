#!/usr/bin/env python3
"""Writes the committed seed corpora under Fuzz/corpus/<target>/ (run from anywhere; deterministic
except for SQLCipher's random IVs and salts).

Real pages come from databases the `sqlcipher` shell writes (plaintext with 512-byte pages, and encrypted with
the fuzz target's raw key and 1024-byte pages). Malformed cases follow the ideas of SQLite's
test/corrupt*.test (no code taken): absurd header page counts, cell counts larger than the page, cell
pointers and content start out of range, B-tree and freelist cycles, overflow chains that loop or end early,
truncated files, and WAL headers that promise more frames than exist.

`make_seeds.py --coffer PATH/TO/coffer` writes only the `coffer-*` seeds: the same database copied by Coffer
itself (`coffer migrate --output-plaintext`, Coffer's 4096-byte pages), cut into pages and records."""
import os, shutil, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
RAW_KEY = "5a" * 32


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


def shell(db, sql):
    subprocess.run(["sqlcipher", db], input=sql.encode(), check=True, capture_output=True)


SCHEMA = """
PRAGMA page_size=512; PRAGMA auto_vacuum=0;
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB, d REAL);
CREATE INDEX t_b ON t(b);
CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE VIEW v AS SELECT a, b FROM t;
CREATE TRIGGER tr AFTER DELETE ON t BEGIN DELETE FROM w WHERE k = old.b; END;
BEGIN;
INSERT INTO t VALUES(1, 'one', x'00ff', 1.5);
INSERT INTO t VALUES(2, NULL, NULL, -2);
INSERT INTO t VALUES(3, 'three', randomblob(1400), 0.25);
INSERT INTO t VALUES(4, CAST(x'c328ff' AS TEXT), zeroblob(3), 1e300);
INSERT INTO t VALUES(-9223372036854775808, 'min', x'', 9223372036854775807);
INSERT INTO t SELECT a + 10, 'row' || a, randomblob(20), a * 0.5 FROM t WHERE a > 0;
INSERT INTO w VALUES('x', 1), ('y', 'two'), ('z', x'0102');
COMMIT;
DELETE FROM t WHERE a = 12;
"""


def pages(data, size):
    return [data[i:i + size] for i in range(0, len(data) - size + 1, size)]


def be32(b, off, value):
    b[off:off + 4] = struct.pack(">I", value)


def be16(b, off, value):
    b[off:off + 2] = struct.pack(">H", value & 0xFFFF)


def main():
    if os.path.isdir(CORPUS):
        for t in os.listdir(CORPUS):
            for f in os.listdir(os.path.join(CORPUS, t)):
                if f.startswith("seed-"):
                    os.remove(os.path.join(CORPUS, t, f))
    tmp = tempfile.mkdtemp()
    try:
        plain = os.path.join(tmp, "plain.db")
        shell(plain, SCHEMA)
        db = open(plain, "rb").read()
        ps = pages(db, 512)

        # salvage: the whole file, then malformed variants.
        put("salvage", "seed-good", db)
        b = bytearray(db); be32(b, 28, 0x80000000); put("salvage", "seed-header-2e31-pages", b)
        b = bytearray(db); put("salvage", "seed-truncated", b[: len(b) - 700])
        for n, p in enumerate(ps, start=1):
            hdr = 100 if n == 1 else 0
            if p[hdr] in (0x0D, 0x0A, 0x05, 0x02):
                b = bytearray(db); be16(b, (n - 1) * 512 + hdr + 3, 0xFFFF)
                put("salvage", f"seed-cellcount-p{n}", b)
            if p[hdr] in (0x05, 0x02):
                b = bytearray(db); be32(b, (n - 1) * 512 + hdr + 8, n)  # right child = itself: a cycle
                put("salvage", f"seed-btree-cycle-p{n}", b)
        b = bytearray(db)  # freelist: trunk = page 2, which points to itself
        be32(b, 32, 2); be32(b, 36, 1000000); be32(b, 512, 2); be32(b, 516, 1); be32(b, 520, 2)
        put("salvage", "seed-freelist-cycle", b)
        # overflow: a table-leaf cell whose first overflow page points back to itself.
        put("salvage", "seed-overflow-loop", overflow_loop(db, ps))

        # page: every page of the file, as page 1 or not, plus malformed headers.
        for n, p in enumerate(ps, start=1):
            put("page", f"seed-p{n}", bytes([1 if n == 1 else 0]) + p)
        for n, p in enumerate(ps[:4], start=1):
            hdr = 100 if n == 1 else 0
            ctl = bytes([1 if n == 1 else 0])
            b = bytearray(p); be16(b, hdr + 3, 0xFFFF); put("page", f"seed-cellcount-p{n}", ctl + b)
            b = bytearray(p); be16(b, hdr + 5, 0); put("page", f"seed-contentstart0-p{n}", ctl + b)
            b = bytearray(p); be16(b, hdr + 1, 511); put("page", f"seed-freeblock-p{n}", ctl + b)
            b = bytearray(p); be16(b, hdr + 8 + (0 if p[hdr] in (0x0D, 0x0A) else 4), 509)
            put("page", f"seed-cellptr-end-p{n}", ctl + b)

        # record: hand-made records of every serial type, plus malformed ones.
        recs = {
            "all-types": rec([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15],
                             b"\x7f" + b"\x80\x00" + b"\x01\x02\x03" + b"\xff" * 4 + b"\x00" * 6 + b"\x80" + b"\0" * 7
                             + struct.pack(">d", 3.25) + b"\xab" + b"z"),
            "text-nonutf8": rec([19], b"\xc3\x28\xff"),
            "empty": rec([], b""),
            "reserved-10": rec([10], b""),
            "header-too-long": b"\x7f\x01",
            "body-short": rec([25], b"ab"),
            "huge-type": bytes([3, 0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        }
        for k, v in recs.items():
            put("record", f"seed-{k}", v)

        for k, v in {"one": b"\x01", "two": b"\x81\x00", "nine": b"\xff" * 9, "eight-cont": b"\x80" * 8,
                     "truncated": b"\x80\x80"}.items():
            put("varint", f"seed-{k}", v)

        # overflow: header (first page, remaining) + pages of 512 bytes.
        def chain(first, remaining, links):
            body = bytearray(512 * 4)
            for page, nxt in links.items():
                be32(body, (page - 1) * 512, nxt)
                body[(page - 1) * 512 + 4:(page) * 512] = bytes([page]) * 508
            return struct.pack(">II", first, remaining) + body
        put("overflow", "seed-two-pages", chain(2, 1000, {2: 3, 3: 0}))
        put("overflow", "seed-loop", chain(2, 5000, {2: 3, 3: 2}))
        put("overflow", "seed-ends-early", chain(2, 2000, {2: 3, 3: 0}))
        put("overflow", "seed-continues", chain(2, 100, {2: 3, 3: 4, 4: 0}))
        put("overflow", "seed-million-pages", chain(2, 0xFFFFFF, {2: 3, 3: 4, 4: 2}))

        # wal: a real WAL from the shell (checkpointing off, copied while the connection is open).
        wdb = os.path.join(tmp, "wal.db")
        walcopy = os.path.join(tmp, "copy-wal")
        shell(wdb, "PRAGMA page_size=512; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;"
                   "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 'x');"
                   "BEGIN; INSERT INTO t VALUES(2, randomblob(900)); COMMIT;\n"
                   f".system cp {wdb}-wal {walcopy}\n")
        wal = open(walcopy, "rb").read()
        put("wal", "seed-good", wal)
        put("wal", "seed-truncated", wal[: len(wal) - 300])
        put("wal", "seed-header-only", wal[:32])
        b = bytearray(wal); b[32 + 24 + 100] ^= 1; put("wal", "seed-bad-frame-checksum", b)

        # pagedecoder: pages of an encrypted file (raw key 0x5a×32, 1024-byte pages).
        edb = os.path.join(tmp, "enc.db")
        shell(edb, f"PRAGMA key=\"x'{RAW_KEY}'\"; CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 'secret');"
                   "INSERT INTO t SELECT a + 1, randomblob(300) FROM t; INSERT INTO t SELECT a + 2, b FROM t;")
        enc = open(edb, "rb").read()
        eps = pages(enc, 1024)
        put("pagedecoder", "seed-p1", b"\x01" + eps[0])
        for n, p in enumerate(eps[1:3], start=2):
            put("pagedecoder", f"seed-p{n}", b"\x00" + eps[0][:16] + p)
        b = bytearray(eps[0]); b[200] ^= 0x10; put("pagedecoder", "seed-p1-flipped", b"\x01" + b)
        put("pagedecoder", "seed-zero", b"\x00" + bytes(16 + 1024))
    finally:
        shutil.rmtree(tmp)


def rec(types, body):
    def varint(v):
        out = [v & 0x7F]
        v >>= 7
        while v:
            out.append(0x80 | (v & 0x7F)); v >>= 7
        return bytes(reversed(out))
    header = b"".join(varint(t) for t in types)
    n = len(header) + 1
    return varint(n) + header + body


def overflow_loop(db, ps):
    """Points the first overflow pointer found (page 3's row, 1400-byte blob) back at its own page."""
    b = bytearray(db)
    for n, p in enumerate(ps, start=1):
        if n > 1 and p[0] == 0x00 and struct.unpack(">I", p[:4])[0] != 0:
            # an overflow page: make its next pointer point to itself
            be32(b, (n - 1) * 512, n)
            return b
    return b


def varint_at(data, at):
    """SQLite's big-endian varint at `at`: (value, offset after it)."""
    value = 0
    for i in range(9):
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return value, at + 9


def coffer_seeds(coffer):
    """Seeds from a file Coffer wrote: the shell's database migrated through Coffer's writer."""
    tmp = tempfile.mkdtemp()
    try:
        plain = os.path.join(tmp, "plain.db")
        shell(plain, SCHEMA)
        out = os.path.join(tmp, "coffer.db")
        subprocess.run([coffer, "migrate", plain, "--output", out, "--output-plaintext"], check=True, capture_output=True)
        db = open(out, "rb").read()
        put("salvage", "coffer-written", db)
        for n, p in enumerate(pages(db, 4096), start=1):
            put("page", f"coffer-p{n}", bytes([1 if n == 1 else 0]) + p)
            hdr = 100 if n == 1 else 0
            if p[hdr] == 0x0D:  # a table leaf: its first cell's record goes to the record target
                cells = struct.unpack(">H", p[hdr + 3:hdr + 5])[0]
                if cells:
                    at = struct.unpack(">H", p[hdr + 8:hdr + 10])[0]
                    size, at = varint_at(p, at)
                    _, at = varint_at(p, at)  # the rowid
                    put("record", f"coffer-p{n}", p[at:at + min(size, 200)])
    finally:
        shutil.rmtree(tmp)


if len(sys.argv) == 3 and sys.argv[1] == "--coffer":
    coffer_seeds(os.path.abspath(sys.argv[2]))
else:
    main()
