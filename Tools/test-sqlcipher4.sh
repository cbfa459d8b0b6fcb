#!/usr/bin/env bash
# Builds Coffer against SQLCipher 4.9.0 and runs every test target but CofferDocumentationTests on it (#44): installs
# ../shared/sqlcipher4 into a prefix of its own (kept between runs, rebuilt when the sources change), builds
# with COFFER_SQLCIPHER_PKGCONFIG=sqlcipher4 in .build-sqlcipher4, checks with ldd that the test bundle links
# libsqlcipher4 and not Debian's libsqlcipher.so.0, then runs the test targets below.
#
# Measured on 2 shared cores: 407 s in all with a warm .build-sqlcipher4 (install ~3 min, incremental build
# 50 s, tests 160 s: CofferTests 92 s, CofferPublicAPITests 22 s, CofferKeyValueTests 19 s, CofferBackupTests
# 25 s); a cold .build-sqlcipher4 costs a full build on top (1612 s here, beside another build).
# Targets:
#   CofferTests            every connection, key, cipher-detection, page-cache and interop path on 4.x,
#                          including SQLCipher4Tests (files both ways with the 3.4.1 shell, SQLCipher 4 files)
#   CofferPublicAPITests   the README's and DocC's API as a user sees it
#   CofferKeyValueTests    the stores on top, with their shell-process observation tests
#   CofferBackupTests      backups and restore: raw page copies, vacuum and export, keyed attaches
#   CofferMonitoringTests  metrics and traces, whose decryption counters depend on the page cache (~5 s)
#   CofferQueryTests       queries, records, full-text search (FTS3's enhanced syntax there; 61 s)
#   CofferRepairTests      repair and migrate of files the 3.4.1 shell and SQLCipher 4.12 wrote (127 s)
#   CofferCLITests         the `coffer` commands as processes (69 s)
#   CofferReliabilityTests crash, multi-process and fuzz-corpus tests (72 s)
#   CofferCorruptionTests  the damage corpus (48 s)
# (the last five timed 2026-11-29 on the 2 shared cores beside two other builds: 377 s together). Tests that
# hold on one library only skip on the other with TestedSQLCipher.only3/only4 and say why.
# usage: Tools/test-sqlcipher4.sh [extra `swift test` arguments, e.g. --filter SQLCipher4Tests]
# env:   COFFER_SQLCIPHER4_PREFIX (default ${TMPDIR:-/tmp}/coffer-sqlcipher4), COFFER_SQLCIPHER4_TARGETS
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
shared=$(cd ../shared/sqlcipher4 && pwd)
prefix=${COFFER_SQLCIPHER4_PREFIX:-${TMPDIR:-/tmp}/coffer-sqlcipher4}
targets=${COFFER_SQLCIPHER4_TARGETS:-CofferTests CofferPublicAPITests CofferKeyValueTests CofferBackupTests CofferMonitoringTests CofferQueryTests CofferRepairTests CofferCLITests CofferReliabilityTests CofferCorruptionTests CofferDocumentationTests}

# 1. SQLCipher 4.9.0 into $prefix, again only when install.sh or the amalgamation changed.
stamp=$(cat "$shared/install.sh" "$shared/sqlite3.c" "$shared/shell.c" | sha256sum | cut -c1-16)
if [ "$(cat "$prefix/.coffer-stamp" 2>/dev/null)" != "$stamp" ] || ! [ -x "$prefix/bin/sqlcipher4" ]; then
  PREFIX=$prefix "$shared/install.sh"
  # SwiftPM refuses (with a warning) a .pc's -D and -Wl flags: Coffer's shim defines SQLITE_HAS_CODEC
  # itself, and the loader finds the library as below, so drop them rather than warn on every build.
  sed -i 's/ -DSQLITE_HAS_CODEC//; s/ -Wl,-rpath,[^ ]*//' "$prefix/lib/pkgconfig/sqlcipher4.pc"
  echo "$stamp" >"$prefix/.coffer-stamp"
fi
# As root install.sh registered $prefix/lib with ld.so; otherwise the loader is told here.
if [ "$(id -u)" != 0 ]; then export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
export COFFER_SQLCIPHER_PKGCONFIG=sqlcipher4 PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export COFFER_SQLCIPHER4_SHELL=$prefix/bin/sqlcipher4
scratch=(--scratch-path .build-sqlcipher4)

# 2. Build, and check the one SQLCipher the bundle links.
swift build --build-tests "${scratch[@]}"
bundle=$(swift build --show-bin-path "${scratch[@]}")/CofferPackageTests.xctest
linked=$(ldd "$bundle")
if ! grep -q "libsqlcipher4.so.0 => $prefix/lib/" <<<"$linked" || grep -q "libsqlcipher.so.0" <<<"$linked"; then
  echo "test-sqlcipher4.sh: $bundle must link $prefix/lib/libsqlcipher4.so.0 and not libsqlcipher.so.0:" >&2
  grep -i "sqlcipher\|sqlite" <<<"$linked" >&2 || true
  exit 1
fi
grep "sqlcipher" <<<"$linked"

# 3. The tests.
if [ $# -gt 0 ]; then
  swift test --skip-build "${scratch[@]}" "$@"
else
  for target in $targets; do
    echo "== $target on SQLCipher 4"
    swift test --skip-build "${scratch[@]}" --filter "^$target\\."
  done
fi
echo "test-sqlcipher4.sh: done in $(($(date +%s) - started)) s"
