#!/usr/bin/env python3
"""Writes a large database in SQLCipher generation N's format with the real SQLCipher 4.12 producer, for
the repair throughput figures (ProfileThroughputTests, and `time coffer repair` end to end).

    python3 Tools/bench/make_profile_bench.py OUTPUT N ROWS     # passphrase 'pw'
"""
import os
import sys
import sqlcipher3

path, compat, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if os.path.exists(path):
    os.remove(path)
db = sqlcipher3.connect(path, isolation_level=None)
db.execute("PRAGMA cipher_default_compatibility = %d" % compat)
db.execute("PRAGMA key = 'pw'")
db.execute("PRAGMA cipher_page_size = 4096")
db.execute("BEGIN")
db.execute("CREATE TABLE msgs(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL, data BLOB)")
db.execute("CREATE INDEX msgs_sender ON msgs(sender)")
db.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d)
    INSERT INTO msgs(sender, body, score, data)
    SELECT 'user' || (i %% 97), printf('message %%d %%s', i, hex(randomblob(60))), i * 0.5, randomblob(16) FROM n""" % rows)
db.execute("COMMIT")
db.close()
print(path, os.path.getsize(path))
