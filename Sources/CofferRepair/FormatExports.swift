// CofferRepair works on the on-disk format CofferFormat reads (pages, ciphers, B-trees, records, WAL):
// its users get those types with `import CofferRepair`, as before the format had a module of its own.
@_exported import CofferFormat
