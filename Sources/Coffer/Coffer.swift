// The umbrella module: `import Coffer` gives an app every layer, as one module did before the split.
//
// CofferEngine      connections, keys and cipher settings, the writer queue and reader pool, monitoring
// CofferRecords     @Table records, queries, schema upgrades, migrations, associations, observation,
//                   the record cache and full-text indexes
// CofferStores      key-value, document and settings stores
// CofferBackup      backups, restore, verify, vacuum and file inspection
//
// Each may import only the ones above it; Package.swift's dependencies make the compiler hold that.

@_exported import CofferBackup
@_exported import CofferEngine
@_exported import CofferRecords
@_exported import CofferStores
