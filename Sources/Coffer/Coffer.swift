// The umbrella module: `import Coffer` gives an app every layer, as one module did before the split.
//
// CofferEngine      connections, keys and cipher settings, the writer queue and reader pool, monitoring
// CofferRecords     @Table records, queries, migrations, associations, observation, the record cache
// CofferSearch      full-text indexes (CJK, pinyin, identifier tokenizers) and schema upgrades
// CofferStores      key-value, document and settings stores
// CofferBackup      backups, restore, verify, vacuum and file inspection
//
// Each may import only the ones above it; Package.swift's dependencies make the compiler hold that.

@_exported import CofferBackup
@_exported import CofferEngine
@_exported import CofferRecords
@_exported import CofferSearch
@_exported import CofferStores
