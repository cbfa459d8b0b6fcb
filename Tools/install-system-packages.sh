#!/bin/sh
# Installs the system packages Coffer builds and tests with, only when they are missing:
# SQLCipher 3.4.1's headers and library (libsqlcipher-dev), its shell (sqlcipher), the independent
# client the interop tests talk to, OpenSSL's headers (libssl-dev; the library itself already comes with
# SQLCipher) for the repair engine's page decryption, and the system sqlite3 shell, the corruption
# corpus's baseline for plaintext files, and zstd's headers and library (libzstd-dev) for compressed
# columns. Needs root (or sudo) the first time; does
# nothing when everything is present.
set -e
# The SQLCipher 4.12 producer for the repair throughput figures (optional: tests skip without it).
python3 -c 'import sqlcipher3' >/dev/null 2>&1 || pip install sqlcipher3-binary >/dev/null 2>&1 || true
# pypinyin, the independent reference of PinyinRecallTests (optional: the test skips without it).
python3 -c 'import pypinyin' >/dev/null 2>&1 || pip install pypinyin >/dev/null 2>&1 || true
# rsvg-convert renders `--page-map` pictures in PageMapCommandTests (optional: the test skips without it).
command -v rsvg-convert >/dev/null 2>&1 || { [ "$(id -u)" -eq 0 ] && apt-get install -y --no-install-recommends librsvg2-bin >/dev/null 2>&1; } || true
if [ -f /usr/include/sqlcipher/sqlite3.h ] && [ -f /usr/include/openssl/evp.h ] && [ -f /usr/include/zstd.h ] && command -v sqlcipher >/dev/null 2>&1 && command -v sqlite3 >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y libsqlcipher-dev sqlcipher libssl-dev sqlite3 libzstd-dev
