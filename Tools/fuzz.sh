#!/usr/bin/env bash
# Builds and runs CofferRepair's libFuzzer targets (Fuzz/Targets/*.swift).
#
#   Tools/fuzz.sh TARGET SECONDS     build TARGET, run it SECONDS on Fuzz/corpus/TARGET (new inputs kept in
#                                    .build-fuzz/corpus/TARGET, crashes in Fuzz/artifacts/TARGET/)
#   Tools/fuzz.sh --build            build only; prints the binary's path
#   Tools/fuzz.sh --ci [SECONDS]     every target for SECONDS (default 20) each; fails on any crash
#   Tools/fuzz.sh --replay TARGET    run the target once over its committed corpus (no fuzzing)
#
# How it builds: swiftc over CofferFormat's sources (the on-disk format, module CofferFormat, built with
# -enable-testing), then over Fuzz/Support and the targets in TARGETS (module CofferFuzz, which
# `@testable import`s CofferFormat), both with -sanitize=fuzzer,address, into one binary (rebuilt only when a
# source changed); COFFER_FUZZ_TARGET selects the target. Fuzz/Targets/salvage.swift is not built: the
# salvager reads CREATE statements through SQLite (CreateStatementReader) and backup hints through Coffer
# (SalvageHints), so it can be fuzzed only linked against Coffer and SQLCipher; FuzzCorpusReplayTests still
# replays its corpus. swift-crypto comes from the package's normal debug build (.build, built here if
# missing); the package's own build is never changed. Output goes to .build-fuzz/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.build-fuzz
DEPS=${FUZZ_DEPS_SCRATCH:-$ROOT/.build}
TARGETS=(varint record page overflow wal pagedecoder)
TIMEOUT=${FUZZ_TIMEOUT:-5}          # seconds per input
RSS=${FUZZ_RSS_MB:-1024}            # memory per process
MAXLEN=${FUZZ_MAX_LEN:-70000}

check_target() {
    [[ -f Fuzz/Targets/$1.swift ]] || { echo "no target $1 (have: ${TARGETS[*]})" >&2; exit 2; }
}

build() {
    local binary=$OUT/bin/coffer-fuzz
    local bin
    bin=$(swift build --scratch-path "$DEPS" --show-bin-path)
    if [[ ! -e $bin/Modules/_CryptoExtras.swiftmodule ]]; then
        swift build --scratch-path "$DEPS" --product _CryptoExtras >&2
    fi
    mkdir -p "$OUT/bin" "$OUT/format"
    local targets format objects
    mapfile -t format < <(find Sources/CofferFormat -name '*.swift' | sort)
    targets=("${TARGETS[@]/#/Fuzz/Targets/}")
    targets=("${targets[@]/%/.swift}")
    mapfile -t objects < <(find "$bin" -path '*Crypto*.build/*.o' -o -path '*SwiftASN1.build/*.o' | sort)
    if [[ -x $binary ]] && [[ -z $(find "${format[@]}" Fuzz/Support "${targets[@]}" -newer "$binary" -name '*.swift') ]]; then
        echo "$binary"
        return
    fi
    rm -f "$binary"
    local flags=(-sanitize=fuzzer,address -parse-as-library -package-name Coffer -O -g -I "$bin/Modules" -I Sources/COpenSSL)
    { swiftc "${flags[@]}" -module-name CofferFormat -enable-testing -wmo -c "${format[@]}" \
        -emit-module -emit-module-path "$OUT/format/CofferFormat.swiftmodule" -o "$OUT/format/CofferFormat.o" 2>&1 &&
        swiftc "${flags[@]}" -module-name CofferFuzz -I "$OUT/format" \
            Fuzz/Support/*.swift "${targets[@]}" "$OUT/format/CofferFormat.o" "${objects[@]}" -lcrypto \
            -o "$binary" 2>&1 || true; } | { grep -v 'ld.gold: warning: Cannot export local symbol' || true; } >&2
    [[ -x $binary ]] || exit 1
    echo "$binary"
}

run() {
    local target=$1 seconds=$2
    check_target "$target"
    local binary
    binary=$(build)
    mkdir -p "$OUT/corpus/$target" "Fuzz/artifacts/$target" "Fuzz/corpus/$target"
    COFFER_FUZZ_TARGET=$target "$binary" -max_total_time="$seconds" -timeout="$TIMEOUT" -rss_limit_mb="$RSS" -max_len="$MAXLEN" \
        -print_final_stats=1 -artifact_prefix="Fuzz/artifacts/$target/" \
        "$OUT/corpus/$target" "Fuzz/corpus/$target"
}

case "${1:-}" in
    --build) build ;;
    --replay)
        check_target "$2"
        binary=$(build)
        COFFER_FUZZ_TARGET=$2 "$binary" -runs=0 -timeout="$TIMEOUT" -rss_limit_mb="$RSS" "Fuzz/corpus/$2"
        ;;
    --ci)
        seconds=${2:-20}
        for target in "${TARGETS[@]}"; do
            echo "== fuzz $target ${seconds}s"
            run "$target" "$seconds" 2>&1 | grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)|stat::|ERROR|SUMMARY|==[0-9]+==|Test unit written' || true
            if compgen -G "Fuzz/artifacts/$target/*" >/dev/null; then
                echo "fuzz $target: crash inputs in Fuzz/artifacts/$target" >&2
                exit 1
            fi
        done
        echo "fuzz: ${#TARGETS[@]} targets, no crash"
        ;;
    ""|-h|--help) sed -n 2,14p "$0"; exit 2 ;;
    *) run "$1" "${2:-60}" ;;
esac
