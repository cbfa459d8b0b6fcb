#!/usr/bin/env bash
# Prints the line coverage of Sources/ from the profiles a `swift test --enable-code-coverage` run wrote:
# per file with --files, always the total. Lines run by the `coffer` CLI in child processes count too (its
# profiles are merged with the test bundle's).
#
#   Tools/coverage.sh                       runs the whole suite with coverage in .build-coverage (so the
#                                           plain debug build in .build is not rebuilt), then reports
#   Tools/coverage.sh --filter 'Pattern'    only matching tests (any `swift test` option passes through)
#   Tools/coverage.sh --files …             also the per-file table
#   Tools/coverage.sh --report-only         no test run: report what `swift test --enable-code-coverage`
#                                           left in .build (what .ci/run does after its test run)
#
# A first coverage build compiles the whole package once more with instrumentation (~6 min on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build-coverage
files=false
run_tests=true
args=()
for arg in "$@"; do
    case $arg in
        --files) files=true ;;
        --report-only) run_tests=false; scratch=.build ;;
        *) args+=("$arg") ;;
    esac
done

toolchain_bin=$(dirname "$(command -v swift)")
llvm_cov=$toolchain_bin/llvm-cov
llvm_profdata=$toolchain_bin/llvm-profdata
[[ -x $llvm_cov && -x $llvm_profdata ]] || { echo "llvm-cov/llvm-profdata not found beside swift ($toolchain_bin)"; exit 2; }

bin=$(swift build --scratch-path "$scratch" --show-bin-path)
codecov=$bin/codecov
status=0
if $run_tests; then
    rm -rf "$codecov"
    set +e
    swift test --enable-code-coverage --scratch-path "$scratch" ${args[@]+"${args[@]}"}
    status=$?
    set -e
fi

# SwiftPM merges only its own profiles; merge every .profraw (the CLI children's as well) ourselves.
shopt -s nullglob
raw=("$codecov"/*.profraw)
[[ ${#raw[@]} -gt 0 ]] || { echo "no coverage profiles in $codecov"; exit 1; }
"$llvm_profdata" merge -sparse "${raw[@]}" -o "$codecov/all.profdata"

objects=("$bin"/CofferPackageTests.xctest)
for tool in coffer coffer-corrupt; do [[ -x $bin/$tool ]] && objects+=(-object "$bin/$tool"); done
sources=(-instr-profile "$codecov/all.profdata" "$PWD/Sources")
if $files; then "$llvm_cov" report "${objects[@]}" "${sources[@]}"; fi
"$llvm_cov" export -summary-only "${objects[@]}" "${sources[@]}" | python3 -c '
import json, sys
lines = json.load(sys.stdin)["data"][0]["totals"]["lines"]
print("line coverage of Sources/: %.1f%% (%d of %d lines)" % (lines["percent"], lines["covered"], lines["count"]))'
if $run_tests; then echo "tests: exit $status"; fi
exit "$status"
