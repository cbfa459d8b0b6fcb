// Coffer's two VFSes, each registered on first use and never as the default:
//
// "coffer" (walwrites.c), which every connection of a `Database` opens through: it wraps the process's
// default VFS and writes a WAL file's frames with one call per commit instead of two per page (SQLite
// writes each frame's 24-byte header and its page apart). The write happens inside SQLite's write of the
// commit frame, before the commit is published to other connections; a write that changes a frame already
// written goes to the file at once, and the connection's next call on its WAL locks writes whatever a
// rolled-back transaction left. Every other file passes through.
//
// "coffer-encrypted-temp" (tempvfs.c), behind `TemporaryStorage.encryptedFiles`: SQLite's temporary
// files, encrypted, over "coffer".
//
// The encrypted temporary-file VFS: a file SQLite opens for temporary
// data — one without a name, or opened as a temporary database, temporary or statement journal or
// transient database (sort runs of CREATE INDEX and ORDER BY among them) — is encrypted with
// AES-256-CTR under a key and nonce drawn at random when the file is opened and never stored: the
// bytes on disk are ciphertext, and nobody, this process included, can read them once the file is
// closed. Every other file (databases, WAL, -shm, rollback journals) passes through untouched, since
// SQLCipher encrypts those itself.
//
// This header declares no SQLite types, so Swift can import it beside CSQLCipher.
#ifndef COFFER_VFS_H
#define COFFER_VFS_H

#ifdef __cplusplus
extern "C" {
#endif

/// The name the WAL-combining VFS is registered under.
#define COFFER_VFS_NAME "coffer"

/// Registers the WAL-combining VFS (never as the default). Safe to call more than once and from several
/// threads. Returns an SQLite result code.
int coffer_vfs_register(void);

/// The name the encrypted temporary-file VFS is registered under.
#define COFFER_TEMP_VFS_NAME "coffer-encrypted-temp"

/// Registers the encrypted temporary-file VFS (never as the default), and "coffer" beneath it. Safe to
/// call more than once and from several threads. Returns an SQLite result code.
int coffer_tempvfs_register(void);

#ifdef __cplusplus
}
#endif

#endif
