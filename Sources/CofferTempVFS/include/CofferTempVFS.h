// The VFS behind `TemporaryStorage.encryptedFiles`: SQLite's temporary files, encrypted.
//
// It wraps the default VFS of the SQLCipher library Coffer links. A file SQLite opens for temporary
// data — one without a name, or opened as a temporary database, temporary or statement journal or
// transient database (sort runs of CREATE INDEX and ORDER BY among them) — is encrypted with
// AES-256-CTR under a key and nonce drawn at random when the file is opened and never stored: the
// bytes on disk are ciphertext, and nobody, this process included, can read them once the file is
// closed. Every other file (databases, WAL, -shm, rollback journals) passes through untouched, since
// SQLCipher encrypts those itself.
//
// This header declares no SQLite types, so Swift can import it beside CSQLCipher.
#ifndef COFFER_TEMP_VFS_H
#define COFFER_TEMP_VFS_H

#ifdef __cplusplus
extern "C" {
#endif

/// The name the VFS is registered under.
#define COFFER_TEMP_VFS_NAME "coffer-encrypted-temp"

/// Registers the VFS (never as the default). Safe to call more than once and from several threads.
/// Returns an SQLite result code.
int coffer_tempvfs_register(void);

#ifdef __cplusplus
}
#endif

#endif
