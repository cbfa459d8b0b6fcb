#!/usr/bin/env python3
"""Writes the SQLCipher 1/2/3/4 fixtures in this directory with the real SQLCipher 4.12 producer.

    pip install sqlcipher3-binary   # module sqlcipher3, SQLCipher 4.12.0 on SQLite 3.51.1
    python3 Tests/Fixtures/sqlcipher/make_fixtures.py

Every file holds the same content (see `content`), so the Swift tests know the ground truth from the row
formula alone (`SQLCipherFixtureTruth.swift` mirrors `row()` below):

    CREATE TABLE msgs(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL, data BLOB)
    CREATE TABLE kv(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID      -- 20 rows
    CREATE INDEX msgs_sender ON msgs(sender);   PRAGMA user_version = 7

Profiles 1-3 are written with `PRAGMA cipher_default_compatibility = N` *before* the key (after the key
leaves a reserve byte no real SQLCipher N writes). Keys: passphrase 'pw-<name>' unless noted.
"""
import os
import shutil
import sqlcipher3

HERE = os.path.dirname(os.path.abspath(__file__))
RAW_KEY = "0123456789abcdef" * 4  # 32 bytes as 64 hex digits


def row(i):
    sender = "user%d" % (i % 7)
    body = "message %d" % i + (" lorem ipsum %04d" % i) * (200 if i % 100 == 0 else 1)
    score = i * 0.5
    data = bytes(((i * 31 + j * 7) % 256) for j in range(8))
    return (i, sender, body, score, data)


def content(db, rows, first=1):
    db.execute("CREATE TABLE msgs(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL, data BLOB)")
    db.execute("CREATE TABLE kv(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID")
    db.execute("CREATE INDEX msgs_sender ON msgs(sender)")
    db.executemany("INSERT INTO msgs VALUES (?, ?, ?, ?, ?)", [row(i) for i in range(first, rows + 1)])
    db.executemany("INSERT INTO kv VALUES (?, ?)", [("key%02d" % k, k * k) for k in range(20)])
    db.execute("PRAGMA user_version = 7")
    db.commit()


def open_db(name, key, compat=None, pragmas=()):
    path = os.path.join(HERE, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlcipher3.connect(path, isolation_level=None)
    # The default is process-global in SQLCipher: set it for every file, 4 included.
    db.execute("PRAGMA cipher_default_compatibility = %d" % (compat or 4))
    db.execute("PRAGMA key = \"%s\"" % key)
    for pragma in pragmas:
        db.execute(pragma)
    db.execute("BEGIN")
    return path, db


def simple(name, key, rows, compat=None, pragmas=()):
    path, db = open_db(name, key, compat, pragmas)
    content(db, rows)
    db.close()
    print(name, os.path.getsize(path))


def wal_fixture():
    """v4-wal.db + v4-wal.db-wal: rows 1-200 checkpointed into the main file; one committed transaction in
    the WAL (rows 201-300 inserted, row 1's body changed to 'edited in wal'); then an open transaction
    inserting rows 301-600 whose pages spilled to the WAL as uncommitted frames. Files copied while the
    writer is still open, as a crash would leave them."""
    name = "v4-wal.db"
    path, db = open_db(name, "pw-v4-wal")
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute("BEGIN")
    content(db, 200)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("BEGIN")
    db.executemany("INSERT INTO msgs VALUES (?, ?, ?, ?, ?)", [row(i) for i in range(201, 301)])
    db.execute("UPDATE msgs SET body = 'edited in wal' WHERE id = 1")
    db.execute("COMMIT")
    db.execute("PRAGMA cache_size = 2")
    db.execute("BEGIN")
    db.executemany("INSERT INTO msgs VALUES (?, ?, ?, ?, ?)", [row(i) for i in range(301, 601)])
    tmp = path + ".copy"
    shutil.copyfile(path, tmp)
    shutil.copyfile(path + "-wal", tmp + "-wal")
    db.execute("ROLLBACK")
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    os.rename(tmp, path)
    os.rename(tmp + "-wal", path + "-wal")
    print(name, os.path.getsize(path), os.path.getsize(path + "-wal"))


if __name__ == "__main__":
    simple("v1-1024.db", "pw-v1-1024", 200, compat=1)
    simple("v2-1024.db", "pw-v2-1024", 200, compat=2)
    simple("v3-1024.db", "pw-v3-1024", 200, compat=3)
    simple("v4-4096.db", "pw-v4-4096", 1200)  # the damage fixture
    for size in (1024, 2048, 8192, 16384):
        simple("v4-%d.db" % size, "pw-v4-%d" % size, 200, pragmas=("PRAGMA cipher_page_size = %d" % size,))
    simple("v4-rawkey.db", "x'%s'" % RAW_KEY, 200)
    # A custom combination no generation uses: SHA-512 KDF with 12345 rounds, HMAC-SHA1, 2048-byte pages.
    # Set after the key, as apps do: the codec lays pages out for reserve 48, but the header keeps 80 (the
    # B-tree reserve), which the reader must take from page 1 (DatabaseFile.btreeReserve).
    simple("custom.db", "pw-custom", 200, pragmas=(
        "PRAGMA kdf_iter = 12345", "PRAGMA cipher_hmac_algorithm = HMAC_SHA1",
        "PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA512", "PRAGMA cipher_page_size = 2048"))
    wal_fixture()
