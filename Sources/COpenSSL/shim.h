// OpenSSL's libcrypto, which SQLCipher itself runs on: the repair engine uses its EVP AES-256-CBC to
// decrypt whole pages in one call (swift-crypto's AES._CBC expands the key again for every 16-byte block).
#include <openssl/evp.h>
