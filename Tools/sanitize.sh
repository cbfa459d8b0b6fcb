#!/usr/bin/env bash
# Runs the concurrency tests under ThreadSanitizer and the repair, backup and C-interop tests under
# AddressSanitizer, each in its own scratch directory (.build-tsan, .build-asan; git-ignored), and fails on
# any test failure or any sanitizer report.
#
#   Tools/sanitize.sh            both
#   Tools/sanitize.sh thread     ThreadSanitizer only
#   Tools/sanitize.sh address    AddressSanitizer only
#
# Each first build compiles the whole package (swift-syntax, BoringSSL) once more: ~5–10 min on 2 idle
# cores; later runs are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

# Writer queue, reader pool, async APIs, rekey and backups under load, key-value caches, the two-thread
# repair pipeline, prepared queries shared across threads, the shared decrypted-page cache, change observation,
# two instances and child processes on one file (the descriptor table), cancellation, interrupts, snapshots and
# commit vetoes, and a live migration batch giving way to a queued write.
THREAD_TESTS='ObservationRandomizedTests|ObservationSubscriberIndexTests|ObservationValueTests|ObservationRegionTests|ObservationMaintenanceTests|KeyValueObservationTests|DecryptedPageCacheMemoryTests|SalvagePipelineTests|PreparedQueryTests|PreparedQueryDatabaseReadTests|ConcurrencySnapshotTests|CheckpointWALTests|TransactionSavepointTests|EncryptionKeyTests|ChangePassphraseStressTests|BackupUnderLoadTests|BackupSchedulerTests|KeyValueCacheTests|KeyValueSharedCacheTests|KeyValueBatchAsyncTests|KeyValueCrashTests|DecryptedPageCacheTests|RecordCacheSnapshotTests|WriterWaitTraceTests|MonitoringMetricsTests|DatabaseSharedFileTests|AppAndExtensionProcessTests|CancellationTests|DatabaseInterruptTests|DatabaseSnapshotTests|TransactionObserverVetoTests|ProgressStreamTests|LiveMigrationTests|RekeyProgressTests|SnapshotObservationTests|ReaderPoolHandOffTests|CompressionAheadTests|PageCryptoTests|RowPrefetchTests|WriterGivingWayTests|CheckpointBulkWritesTests'
# Repair (parsers over hostile bytes), backup, and the C boundary (SQLCipher calls, the test VFS, the
# encrypted temporary-file VFS, the caching crypto provider).
ADDRESS_TESTS='CofferRepairTests|BackupRestoreTests|BackupKeyKindsTests|ChangeTrackingTests|IncrementalCostTests|InteropShellTests|LinkageTests|ValueBindingTests|ErrorCorruptionTests|HostileSchemaRepairTests|FaultInjectionTests|PowerLossTests|TemporaryStorageTests|DecryptedPageCacheTests|CompressionAheadTests|PageCryptoTests|RowPrefetchTests|WALWriteCombiningTests'

run() {
    local sanitizer=$1 filter=$2 scratch
    [[ $sanitizer == thread ]] && scratch=.build-tsan || scratch=.build-asan
    local log
    log=$(mktemp)
    local started=$SECONDS
    echo "== $sanitizer sanitizer: build"
    swift build --build-tests --scratch-path "$scratch" --sanitize="$sanitizer" 2>&1 | tail -3
    echo "== $sanitizer sanitizer: test ($filter)"
    set +e
    TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0} ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} \
        swift test --skip-build --scratch-path "$scratch" --sanitize="$sanitizer" --filter "$filter" >"$log" 2>&1
    local status=$?
    set -e
    grep -E 'Executed|error:|failed|passed|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|SUMMARY: ' "$log" | tail -25
    local reports
    reports=$(grep -cE 'WARNING: ThreadSanitizer|ERROR: AddressSanitizer' "$log" || true)
    echo "$sanitizer sanitizer: exit $status, $reports reports, $((SECONDS - started)) s (log: $log)"
    [[ $status == 0 && $reports == 0 ]]
}

case "${1:-both}" in
    thread) run thread "$THREAD_TESTS" ;;
    address) run address "$ADDRESS_TESTS" ;;
    both) run thread "$THREAD_TESTS" && run address "$ADDRESS_TESTS" ;;
    *) sed -n 2,11p "$0"; exit 2 ;;
esac
