#!/bin/sh
# Draws docs/repair-page-map.svg: the page map of a damaged chat database, damaged as in the repair
# transcript of CofferRepair's Repair.md (the message table's interior page zeroed, three leaves flipped), as `coffer repair
# --page-map` sees it. Needs a debug build (`swift build`) and the `sqlcipher` shell.
# Usage: Tools/page-map-example.sh [output.svg]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/repair-page-map.svg}
bin=$root/.build/debug
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'pw' > "$work/pw"
sqlcipher "$work/chat.db" <<'SQL' >/dev/null
PRAGMA key = 'pw';
PRAGMA cipher_page_size = 4096;
CREATE TABLE conversation(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
CREATE TABLE message(id INTEGER PRIMARY KEY, conversation INTEGER NOT NULL, sender TEXT, body TEXT, sent REAL);
INSERT INTO conversation(title) VALUES ('family'), ('work'), ('friends');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO message(conversation, sender, body, sent)
SELECT i % 3 + 1, 'user' || (i % 17), 'message ' || i || ' ' || substr(hex(randomblob(60)), 1, 40 + i % 60), 1700000000 + i
FROM n;
SQL
"$bin/coffer-corrupt" "$work/chat.db" --output "$work/damaged.db" --kind zero-interior --seed 7 \
    --passphrase-file "$work/pw"
"$bin/coffer-corrupt" "$work/damaged.db" --output "$work/damaged2.db" --kind flip-bytes --count 3 --seed 11 \
    --passphrase-file "$work/pw"
"$bin/coffer" repair "$work/damaged2.db" --output "$work/recovered.db" --passphrase-file "$work/pw" \
    --page-map "$work/map.svg"
# The title names the temporary directory: keep only the file's name.
sed "s|$work/||g" "$work/map.svg" > "$out"
echo "wrote $out"
