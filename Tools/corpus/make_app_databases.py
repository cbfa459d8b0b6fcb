#!/usr/bin/env python3
"""Realistic app databases with ground truth, for repair and migrate tests (separate from the damage injector).

Usage:
    make_app_databases.py OUT_DIR [--seed N] [--apps chat,maps,legacy,hostile]
        [--page-sizes 1024,4096] [--wal yes,no] [--profiles plaintext,sqlcipher3,sqlcipher4] [--scale K]

For every combination it writes OUT_DIR/<app>-<profile>-<page size>-<wal|nowal>.db (plus its -wal when
"wal"), a ground truth <same>.json beside it, and OUT_DIR/manifest.json listing them all:
    {"seed": N, "passphrase": "...", "files": [{"name", "path", "wal_path", "truth", "app", "profile",
      "page_size", "wal"}]}

The apps (same data for every profile, page size and WAL choice; deterministic from the seed):
- chat: conversations and messages; an FTS4 external-content index on the messages kept by triggers
  (insert, update, delete), text in English, Chinese, Japanese and Korean; a porter FTS4 contact search
  with its own content and prefix indexes; AUTOINCREMENT ids; BLOB attachments.
- maps: places with an R*Tree (float) and zones with an rtree_i32; WITHOUT ROWID tiles; a view.
- legacy: an app that migrated for years: ALTER TABLE ADD COLUMN with defaults (rows older than the
  column keep short records), a dropped table, AUTOINCREMENT with deleted top rows (sqlite_sequence above
  max(rowid)), deleted rows, an expression and partial index, user_version and application_id.
- hostile: legal but hostile identifiers in every quoting SQLite accepts ('single', "double", [bracket],
  `backtick`, keywords, Unicode, emoji, embedded quotes), CHECK/DEFAULT expressions with commas and
  parentheses, COLLATE, type names with arguments, INTEGER PRIMARY KEY DESC, WITHOUT ROWID with DESC key,
  a trigger, a view and an FTS4 table whose name holds quotes.

Writers: plaintext with the system `sqlite3` shell, SQLCipher 3 with the `sqlcipher` 3.4.1 shell (both
through a pipe), SQLCipher 4 with python's sqlcipher3 (SQLCipher 4.12, its defaults). A "wal" file is
written in WAL mode with wal_autocheckpoint = 0: the first half of the history is checkpointed into the
main file, the rest is committed into the WAL, and both files are copied while the writer is still open
(so the WAL keeps its committed frames).

Ground truth (per file, read with sqlcipher3 from a scratch copy of the snapshot): "tables": every
ordinary table (not the shadow tables of virtual tables, not sqlite_*) as {"columns": [...], "rows":
[[rowid or null, value, ...]]} with typed values ["n"], ["i", int], ["r", "repr"], ["t", text],
["b", hex]; "virtual_tables": {name: module}; "fts4": names whose FTS4 integrity-check applies;
"queries": [{"sql", "rows"}] (MATCH and R*Tree box queries, answers in order); "sequences":
{table: seq}; "next_ids": {table: the id the next insert gets: max(seq, max(rowid)) + 1}; "user_version";
"application_id".

Reuse (damage scoring): call `generate(out_dir, seed, apps, page_sizes, wals, profiles, scale)` from
Python, or run the script; damage the .db / -wal files it lists with coffer-corrupt, and score the repair
of each against its truth JSON.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

PASSPHRASE = "corpus pass 'phrase'"
CJK = ["你好", "世界", "东京", "拉面", "こんにちは", "ラーメン", "안녕하세요", "서울", "北京", "咖啡"]
WORDS = ("hello world meeting lunch coffee tomorrow project report train station photo birthday "
         "running jumps quick brown fox lazy dog weekend holiday concert ticket").split()


def sql_literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return "X'" + bytes(value).hex() + "'"
    return "'" + str(value).replace("'", "''") + "'"


def insert(table, columns, rows):
    cols = ", ".join(columns)
    return "".join(f"INSERT INTO {table}({cols}) VALUES ({', '.join(sql_literal(v) for v in row)});\n" for row in rows)


def sentence(rng, cjk=True):
    words = rng.sample(WORDS, rng.randint(3, 7))
    if cjk and rng.random() < 0.5:
        words += rng.sample(CJK, rng.randint(1, 2))
    rng.shuffle(words)
    return " ".join(words)


# Each app returns (phase one SQL, phase two SQL, queries). Phase two is what a WAL file keeps in its WAL.

def chat(rng, scale):
    one = """
PRAGMA application_id = 1128808788;
PRAGMA user_version = 12;
CREATE TABLE conversation(id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_at INTEGER);
CREATE TABLE message(id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL
  REFERENCES conversation(id), sender TEXT, body TEXT, sent_at INTEGER, attachment BLOB);
CREATE INDEX message_conversation ON message(conversation_id, sent_at);
CREATE VIRTUAL TABLE message_fts USING fts4(content="message", body, tokenize=unicode61);
CREATE TRIGGER message_ai AFTER INSERT ON message BEGIN
  INSERT INTO message_fts(docid, body) VALUES (new.id, new.body); END;
CREATE TRIGGER message_bd BEFORE DELETE ON message BEGIN DELETE FROM message_fts WHERE docid = old.id; END;
CREATE TRIGGER message_bu BEFORE UPDATE ON message BEGIN DELETE FROM message_fts WHERE docid = old.id; END;
CREATE TRIGGER message_au AFTER UPDATE ON message BEGIN
  INSERT INTO message_fts(docid, body) VALUES (new.id, new.body); END;
CREATE VIRTUAL TABLE contact_search USING fts4(name, phone, tokenize=porter, prefix="2,3");
"""
    one += insert("conversation", ["id", "title", "created_at"],
                  [(i, sentence(rng), 1_600_000_000 + i * 86400) for i in range(1, 6)])
    n = 60 * scale
    rows = []
    for i in range(n):
        attachment = bytes(rng.randrange(256) for _ in range(rng.choice([0, 16, 300]))) or None
        rows.append((rng.randint(1, 5), rng.choice(["ana", "bo", "李雷", "ミキ"]), sentence(rng),
                     1_600_000_000 + i * 37, attachment))
    one += insert("message", ["conversation_id", "sender", "body", "sent_at", "attachment"], rows)
    one += insert("contact_search", ["name", "phone"],
                  [(f"{rng.choice(['Anna', 'Bob', 'Chen', 'Dora'])} {rng.choice(WORDS)}", f"+1 555 {i:04d}")
                   for i in range(20 * scale)])
    two = insert("message", ["conversation_id", "sender", "body", "sent_at"],
                 [(rng.randint(1, 5), "ana", sentence(rng), 1_700_000_000 + i) for i in range(20 * scale)])
    two += f"UPDATE message SET body = body || ' edited 咖啡' WHERE id % 9 = 0;\n"
    two += f"DELETE FROM message WHERE id % 11 = 0 OR id > {n + 20 * scale - 3};\n"
    two += "DELETE FROM contact_search WHERE docid % 4 = 0;\n"
    queries = [f"SELECT docid FROM message_fts WHERE message_fts MATCH '{w}' ORDER BY docid"
               for w in ["hello", "coffee", "咖啡", "ラーメン", "서울", "wor*", "edited", "quick brown"]]
    queries += ["SELECT count(*) FROM message_fts WHERE message_fts MATCH 'train OR station'",
                "SELECT docid FROM contact_search WHERE contact_search MATCH 'run*' ORDER BY docid",
                "SELECT docid FROM contact_search WHERE contact_search MATCH 'name:ann*' ORDER BY docid"]
    return one, two, queries


def maps(rng, scale):
    one = """
PRAGMA user_version = 3;
CREATE TABLE place(id INTEGER PRIMARY KEY, name TEXT, kind TEXT, lat REAL, lon REAL, meta BLOB);
CREATE VIRTUAL TABLE place_index USING rtree(id, min_lat, max_lat, min_lon, max_lon);
CREATE VIRTUAL TABLE zone USING rtree_i32(id, x0, x1, y0, y1);
CREATE TABLE tile(z INTEGER, x INTEGER, y INTEGER, data BLOB, PRIMARY KEY(z, x, y)) WITHOUT ROWID;
CREATE VIEW cafe AS SELECT id, name FROM place WHERE kind = 'cafe';
"""
    places, boxes = [], []
    for i in range(1, 120 * scale + 1):
        lat, lon = round(rng.uniform(-60, 60), 4), round(rng.uniform(-170, 170), 4)
        places.append((i, f"{rng.choice(['Cafe', 'Park', 'Museum'])} {rng.choice(CJK)} {i}",
                       rng.choice(["cafe", "park", "museum"]), lat, lon, bytes([i % 256, 7])))
        boxes.append((i, lat - 0.01, lat + 0.01, lon - 0.02, lon + 0.02))
    one += insert("place", ["id", "name", "kind", "lat", "lon", "meta"], places)
    one += insert("place_index", ["id", "min_lat", "max_lat", "min_lon", "max_lon"], boxes)
    one += insert("zone", ["id", "x0", "x1", "y0", "y1"],
                  [(i, i * 10, i * 10 + rng.randint(1, 50), -i, -i + rng.randint(1, 50)) for i in range(1, 40 * scale)])
    one += insert("tile", ["z", "x", "y", "data"],
                  [(z, x, y, bytes(rng.randrange(256) for _ in range(40))) for z in range(3) for x in range(4) for y in range(3)])
    two = "DELETE FROM place_index WHERE id % 7 = 0;\nDELETE FROM place WHERE id % 7 = 0;\n"
    two += "UPDATE place_index SET min_lat = min_lat + 1, max_lat = max_lat + 1 WHERE id % 5 = 0;\n"
    two += insert("place_index", ["id", "min_lat", "max_lat", "min_lon", "max_lon"],
                  [(1000 + i, 10.0 + i, 10.5 + i, 20.0, 21.0) for i in range(10)])
    queries = ["SELECT id FROM place_index WHERE min_lat >= 0 AND max_lat <= 30 AND min_lon >= -50 AND max_lon <= 90 ORDER BY id",
               "SELECT id FROM place_index WHERE max_lat >= 10 AND min_lat <= 15 ORDER BY id",
               "SELECT count(*) FROM place_index",
               "SELECT id, x0, x1 FROM zone WHERE x0 >= 100 AND x1 <= 300 ORDER BY id",
               "SELECT id FROM cafe ORDER BY id"]
    return one, two, queries


def legacy(rng, scale):
    one = """
PRAGMA application_id = 7;
CREATE TABLE account(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT UNIQUE, created INTEGER);
CREATE TABLE old_log(id INTEGER PRIMARY KEY, line TEXT);
CREATE TABLE item(id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER, title TEXT, price NUMERIC);
"""
    one += insert("account", ["email", "created"], [(f"user{i}@example.com", 1_400_000_000 + i) for i in range(30 * scale)])
    one += insert("old_log", ["line"], [(sentence(rng, cjk=False),) for _ in range(50 * scale)])
    one += insert("item", ["account_id", "title", "price"],
                  [(rng.randint(1, 30 * scale), sentence(rng), rng.choice([1, 2.5, "9.99", 42])) for _ in range(60 * scale)])
    one += """
ALTER TABLE account ADD COLUMN nickname TEXT DEFAULT 'anon';
ALTER TABLE item ADD COLUMN tags TEXT;
DROP TABLE old_log;
CREATE TABLE setting(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
INSERT INTO setting VALUES ('theme', 'dark'), ('volume', 0.75), ('launches', 1200);
PRAGMA user_version = 2;
"""
    one += insert("account", ["email", "created", "nickname"],
                  [(f"late{i}@example.com", 1_500_000_000 + i, f"nick{i}") for i in range(10 * scale)])
    two = f"""
DELETE FROM item WHERE id % 5 = 0 OR id > {60 * scale - 6};
DELETE FROM account WHERE id > {40 * scale - 3};
ALTER TABLE account ADD COLUMN score REAL DEFAULT 0.5;
CREATE INDEX item_title ON item(lower(title)) WHERE price > 10;
UPDATE item SET tags = 'sale,old' WHERE id % 3 = 0;
PRAGMA user_version = 3;
"""
    two += insert("item", ["account_id", "title", "price", "tags"], [(1, "new " + sentence(rng), 12, "new") for _ in range(5)])
    two += "DELETE FROM item WHERE id = (SELECT max(id) FROM item);\n"
    queries = ["SELECT id, nickname, score FROM account WHERE id % 10 = 1 ORDER BY id",
               "SELECT count(*) FROM item WHERE lower(title) LIKE '%fox%' AND price > 10"]
    return one, two, queries


def hostile(rng, scale):
    one = """
CREATE TABLE "select"("from" TEXT, [where] INTEGER, `group` REAL, 'order' BLOB, "a""b" TEXT,
  [c d] TEXT DEFAULT (',('), "ключ" TEXT COLLATE NOCASE, "表" INTEGER CHECK ("表" >= 0 AND "表" IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)),
  "emoji😀" VARCHAR(20, 3));
CREATE TABLE [weird ] (`id` INTEGER PRIMARY KEY, "x" DECIMAL(10, 2) NOT NULL DEFAULT (round(1.25, 1)), y VARCHAR(20) COLLATE RTRIM);
CREATE TABLE 'quoted'('a', 'b', "c");
CREATE TABLE t_without(k TEXT, v, PRIMARY KEY(k DESC)) WITHOUT ROWID;
CREATE TABLE pk_desc(id INTEGER PRIMARY KEY DESC, v);
CREATE INDEX "idx ""q"" 2" ON "select"("表", lower("from")) WHERE [where] > 3;
CREATE VIEW "v w" AS SELECT "from", [where] FROM "select";
CREATE TRIGGER "trg;drop" AFTER DELETE ON [weird ] BEGIN INSERT INTO 'quoted' VALUES (old.id, old.x, 'deleted'); END;
CREATE VIRTUAL TABLE "fts ""x"" idx" USING fts4("body text", tokenize=porter);
"""
    one += insert('"select"', ['"from"', "[where]", "`group`", "'order'", '"a""b"', '"ключ"', '"表"', '"emoji😀"'],
                  [(sentence(rng), i, i / 3, bytes([i % 256]), f"q'\"{i}", rng.choice(CJK), i % 10, "😀" * (i % 3))
                   for i in range(30 * scale)])
    one += insert("[weird ]", ["x", "y"], [(i * 1.5, f"y{i}   ") for i in range(20 * scale)])
    one += insert("'quoted'", ["a", "b", "c"], [(i, None, "c") for i in range(5)])
    one += insert("t_without", ["k", "v"], [(f"key {i:03d}", i) for i in range(20 * scale)])
    one += insert("pk_desc", ["id", "v"], [(i * 3, f"v{i}") for i in range(1, 20 * scale)])
    one += insert('"fts ""x"" idx"', ['"body text"'], [(sentence(rng),) for _ in range(20 * scale)])
    two = "DELETE FROM [weird ] WHERE id % 4 = 0;\nUPDATE \"select\" SET [c d] = 'x,y)' WHERE [where] % 5 = 0;\n"
    queries = ['SELECT docid FROM "fts ""x"" idx" WHERE "fts ""x"" idx" MATCH \'jump\' ORDER BY docid',
               'SELECT "from", [where] FROM "v w" WHERE [where] > 20 ORDER BY [where]',
               "SELECT a, b, c FROM 'quoted' ORDER BY rowid"]
    return one, two, queries


APPS = {"chat": chat, "maps": maps, "legacy": legacy, "hostile": hostile}


class ShellWriter:
    """The sqlite3 or sqlcipher shell through a pipe; `sync` waits until every statement sent has run."""

    def __init__(self, tool, path):
        self.process = subprocess.Popen([tool, "-batch", "-bail", path], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, sql):
        self.process.stdin.write(sql + "\n")

    def sync(self):
        self.process.stdin.write("SELECT 'coffer-sync';\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if line == "":
                raise RuntimeError("shell failed: " + self.process.stderr.read())
            if line.strip() == "coffer-sync":
                return

    def close(self):
        self.process.stdin.close()
        self.process.wait()
        if self.process.returncode != 0:
            raise RuntimeError("shell failed: " + self.process.stderr.read())


class PythonWriter:
    """python's sqlcipher3 (SQLCipher 4.12)."""

    def __init__(self, path):
        import sqlcipher3
        self.connection = sqlcipher3.connect(path, isolation_level=None)

    def run(self, sql):
        self.connection.executescript(sql)

    def sync(self):
        pass

    def close(self):
        self.connection.close()


def key_sql(profile, page_size):
    if profile == "plaintext":
        return f"PRAGMA page_size = {page_size};"
    quoted = PASSPHRASE.replace("'", "''")
    # Per connection (cipher_default_compatibility would change every later connection of the process).
    compatibility = "PRAGMA cipher_compatibility = 4;\n" if profile == "sqlcipher4" else ""
    return f"PRAGMA key = '{quoted}';\n{compatibility}PRAGMA cipher_page_size = {page_size};"


def write(path, profile, page_size, wal, one, two, out_db):
    writer = PythonWriter(path) if profile == "sqlcipher4" else ShellWriter(
        "sqlite3" if profile == "plaintext" else "sqlcipher", path)
    writer.run(key_sql(profile, page_size))
    if wal:
        writer.run("PRAGMA journal_mode = WAL;\nPRAGMA wal_autocheckpoint = 0;")
    writer.run("BEGIN;\n" + one + "COMMIT;")
    if wal:
        writer.run("PRAGMA wal_checkpoint(TRUNCATE);")
    # Phase two in several transactions, as an app would commit it.
    for statement in [s for s in two.split(";\n") if s.strip()]:
        writer.run(statement + ";")
    writer.sync()
    shutil.copyfile(path, out_db)
    if wal:
        if not os.path.exists(path + "-wal") or os.path.getsize(path + "-wal") == 0:
            raise RuntimeError("no WAL frames kept for " + out_db)
        shutil.copyfile(path + "-wal", out_db + "-wal")
    writer.close()


def typed(value):
    if value is None:
        return ["n"]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, float):
        return ["r", repr(value)]
    if isinstance(value, bytes):
        return ["b", value.hex()]
    return ["t", value]


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def truth(out_db, profile, page_size, queries):
    import sqlcipher3
    scratch = tempfile.mkdtemp(prefix="coffer-truth-")
    try:
        copy = os.path.join(scratch, "t.db")
        shutil.copyfile(out_db, copy)
        if os.path.exists(out_db + "-wal"):
            shutil.copyfile(out_db + "-wal", copy + "-wal")
        c = sqlcipher3.connect(copy, isolation_level=None)
        if profile != "plaintext":
            quoted = PASSPHRASE.replace("'", "''")
            compatibility = 3 if profile == "sqlcipher3" else 4
            c.executescript(f"PRAGMA key = '{quoted}'; PRAGMA cipher_compatibility = {compatibility};"
                            f" PRAGMA cipher_page_size = {page_size};")
        master = c.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        virtual = {}
        for kind, name, sql in master:
            if kind == "table" and sql and sql.upper().startswith("CREATE VIRTUAL TABLE"):
                module = sql.split("USING", 1)[1].strip().split("(")[0].strip().lower()
                virtual[name] = module
        shadows = set()
        for name in virtual:
            shadows |= {row[0] for row in c.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'",
                (name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "\\_%",))}
        tables = {}
        for kind, name, sql in master:
            if kind != "table" or name in virtual or name in shadows or name.startswith("sqlite_"):
                continue
            columns = [row[1] for row in c.execute(f"PRAGMA table_info({quote(name)})")]
            without_rowid = "WITHOUT ROWID" in sql.upper()
            select = ", ".join(quote(col) for col in columns)
            rowid = "NULL" if without_rowid else "_rowid_"
            rows = [[typed(v) for v in row] for row in c.execute(f"SELECT {rowid}, {select} FROM {quote(name)}")]
            rows.sort(key=lambda row: json.dumps(row, ensure_ascii=False))
            tables[name] = {"columns": columns, "rows": rows}
        answers = [{"sql": q, "rows": [[typed(v) for v in row] for row in c.execute(q)]} for q in queries]
        sequences = dict(c.execute("SELECT name, seq FROM sqlite_sequence").fetchall()) if any(
            name == "sqlite_sequence" for _, name, _ in master) else {}
        # SQLite's AUTOINCREMENT rule: the next id is one past the larger of the counter and max(rowid).
        next_ids = {name: max(seq, c.execute(f"SELECT coalesce(max(_rowid_), 0) FROM {quote(name)}").fetchone()[0]) + 1
                    for name, seq in sequences.items()}
        result = {
            "tables": tables, "virtual_tables": virtual,
            "fts4": [name for name, module in virtual.items() if module == "fts4"],
            "queries": answers, "sequences": sequences, "next_ids": next_ids,
            "user_version": c.execute("PRAGMA user_version").fetchone()[0],
            "application_id": c.execute("PRAGMA application_id").fetchone()[0],
        }
        c.close()
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def generate(out_dir, seed=1, apps=tuple(APPS), page_sizes=(1024, 4096), wals=(True, False),
             profiles=("plaintext", "sqlcipher3", "sqlcipher4"), scale=1):
    """Writes every combination into out_dir and returns the manifest (also written as manifest.json)."""
    os.makedirs(out_dir, exist_ok=True)
    files = []
    work = tempfile.mkdtemp(prefix="coffer-corpus-")
    try:
        for app in apps:
            for profile in profiles:
                for page_size in page_sizes:
                    for wal in wals:
                        rng = random.Random(f"{seed}-{app}")  # the same data in every variant
                        one, two, queries = APPS[app](rng, scale)
                        name = f"{app}-{profile}-{page_size}-{'wal' if wal else 'nowal'}"
                        out_db = os.path.join(out_dir, name + ".db")
                        for suffix in ("", "-wal"):
                            if os.path.exists(out_db + suffix):
                                os.remove(out_db + suffix)
                        scratch = os.path.join(work, name + ".db")
                        write(scratch, profile, page_size, wal, one, two, out_db)
                        entry = {"name": name, "path": out_db, "wal_path": out_db + "-wal" if wal else None,
                                 "truth": os.path.join(out_dir, name + ".json"), "app": app, "profile": profile,
                                 "page_size": page_size, "wal": wal}
                        document = dict(entry, passphrase=None if profile == "plaintext" else PASSPHRASE)
                        document.update(truth(out_db, profile, page_size, queries))
                        with open(entry["truth"], "w", encoding="utf-8") as handle:
                            json.dump(document, handle, ensure_ascii=False, indent=1)
                        files.append(entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    manifest = {"seed": seed, "passphrase": PASSPHRASE, "files": files}
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, ensure_ascii=False, indent=1)
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--page-sizes", default="1024,4096")
    parser.add_argument("--wal", default="yes,no")
    parser.add_argument("--profiles", default="plaintext,sqlcipher3,sqlcipher4")
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args()
    manifest = generate(args.out_dir, args.seed, args.apps.split(","), [int(p) for p in args.page_sizes.split(",")],
                        [w == "yes" for w in args.wal.split(",")], args.profiles.split(","), args.scale)
    print(f"{len(manifest['files'])} databases in {args.out_dir}")


if __name__ == "__main__":
    sys.exit(main())
