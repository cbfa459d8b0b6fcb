// DamageKind — the kinds of damage the injector knows, named as on the command line.
//
// Each kind models a way real files break: bit rot and bad sectors (flip-bytes, garbage-run), a write torn
// or lost at a page boundary (zero-interior, zero-leaf-run, zero-page1, damage-overflow,
// damage-freelist-trunk), a copy or sync cut short (truncate), and a header overwritten by another program
// (overwrite-header, flip-salt). The page roles come from the pristine file, so a kind aims at the structure
// it names instead of hoping a random page happens to be one.

/// A kind of damage.
public enum DamageKind: String, Sendable, Codable, CaseIterable {
    /// XOR random bytes (a non-zero mask each) in `count` random pages (default 3).
    case flipBytes = "flip-bytes"
    /// Zero one interior page (a table interior page when the file has one, else an index interior page).
    case zeroInterior = "zero-interior"
    /// Zero page 1 entirely. On an encrypted file this destroys the salt.
    case zeroPage1 = "zero-page1"
    /// Overwrite the first 100 bytes with random bytes: the plaintext header, or the salt and the start of
    /// page 1's ciphertext on an encrypted file.
    case overwriteHeader = "overwrite-header"
    /// Cut the file's tail, at a page boundary or in the middle of a page (seed decides), keeping at least
    /// two pages.
    case truncate
    /// Overwrite a run of consecutive pages (length `count`, default 2…6 from the seed) with random bytes.
    case garbageRun = "garbage-run"
    /// Zero a run of consecutive leaf pages (table or index leaves; length `count`, default 2…5).
    case zeroLeafRun = "zero-leaf-run"
    /// Overwrite 16…64 bytes of one overflow page's content with random bytes.
    case damageOverflow = "damage-overflow"
    /// Overwrite one freelist trunk page with random bytes.
    case damageFreelistTrunk = "damage-freelist-trunk"
    /// XOR 1…4 bytes of page 1's first 16 bytes: the salt of an encrypted file, the magic of a plain one.
    case flipSalt = "flip-salt"
}
