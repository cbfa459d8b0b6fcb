// CofferEngine's public API speaks CofferFormat's types — `Encryption` (the secret), `CipherSettings`,
// `KDFAlgorithm` — so whoever imports the engine (and the umbrella `Coffer`) sees them under one name each,
// owned once at the lowest layer.
@_exported import CofferFormat
