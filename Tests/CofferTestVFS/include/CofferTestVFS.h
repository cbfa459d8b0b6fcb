// A crash-simulating VFS for Coffer's power-loss tests (SQLite's own crash-test method).
//
// It wraps the default "unix" VFS of the SQLCipher library Coffer links. Every write is passed
// through, but the content each 512-byte sector had at its file's last fsync is kept aside. A
// simulated power cut first makes every later write, sync, truncate and delete fail with
// SQLITE_IOERR (the machine is off); coffer_testvfs_apply_power_loss() then rewrites the files as
// the disk could hold them after the cut: each sector written since its file's last fsync
// independently keeps its new content or goes back to its synced content (a torn page when the
// sectors of one page disagree), and a file extended since its last fsync loses the extension
// unless a kept sector lies in it.
//
// This header deliberately declares no SQLite types, so Swift can import it beside CSQLCipher.
#ifndef COFFER_TEST_VFS_H
#define COFFER_TEST_VFS_H

#ifdef __cplusplus
extern "C" {
#endif

/// Registers the VFS "coffer-crash" (as the default when make_default is nonzero). Returns an
/// SQLite result code.
int coffer_testvfs_register(int make_default);

/// Unregisters it (the unix VFS becomes the default again) and forgets all state.
int coffer_testvfs_unregister(void);

/// Cuts the power after `operations` more writes or syncs (that one fails too); a negative value
/// disarms.
void coffer_testvfs_arm(long long operations);

/// Cuts the power now.
void coffer_testvfs_cut_now(void);

/// Nonzero once the power is cut.
int coffer_testvfs_is_cut(void);

/// Applies the loss to the files on disk, chosen from `seed`, then restores power and forgets the
/// tracked state. Returns the number of sectors that went back to their synced content.
long long coffer_testvfs_apply_power_loss(unsigned long long seed);

/// Writes and syncs seen since registration (for choosing a cut point).
long long coffer_testvfs_operation_count(void);

// Fault injection, independent of the power cut: with the VFS registered, the `nth` (from 1) write,
// sync or truncate among `kinds` fails with SQLITE_FULL when `full` is nonzero, else with
// SQLITE_IOERR_WRITE / _FSYNC / _TRUNCATE. With `sticky`, every later operation of those kinds fails
// too (a full disk); without, only that one does (a transient error). kinds = 0 disarms. Arming resets
// the counters below.
enum {
    COFFER_TESTVFS_FAULT_WRITE = 1,
    COFFER_TESTVFS_FAULT_SYNC = 2,
    COFFER_TESTVFS_FAULT_TRUNCATE = 4,
};
/// Arms (or, with kinds = 0, disarms) a fault, as described above.
void coffer_testvfs_fail(int kinds, long long nth, int full, int sticky);
/// Operations of the armed kinds seen since arming (with a large `nth`: the number of fault points).
long long coffer_testvfs_fault_operations_seen(void);
/// Failures injected since arming.
long long coffer_testvfs_faults_fired(void);

#ifdef __cplusplus
}
#endif

#endif
