#!/bin/sh
# Installs the system packages Coffer builds and tests with, only when they are missing:
# SQLCipher 3.4.1's headers and library (libsqlcipher-dev) and its shell (sqlcipher), the independent
# client the interop tests talk to. Needs root (or sudo) the first time; does nothing afterwards.
set -e
if [ -f /usr/include/sqlcipher/sqlite3.h ] && command -v sqlcipher >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y libsqlcipher-dev sqlcipher
