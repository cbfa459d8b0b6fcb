// The cache's table: page versions by IV, in sets of ways, behind striped locks. Used by provider.c.
#ifndef COFFER_PAGE_TABLE_H
#define COFFER_PAGE_TABLE_H

#define PAGE_IV_SIZE 16
#define PAGE_MAX_SECRET 64

/// Copies to `mac` the MAC remembered for the page (ciphertext `size` bytes, then its IV) under
/// `mac_key` for `page_number` (4 bytes); 1 if it was there, else 0.
int page_table_find_mac(const unsigned char *iv, const unsigned char *ciphertext, int size,
                        const unsigned char *mac_key, int mac_key_size, const unsigned char *page_number,
                        unsigned char *mac, int mac_size);

/// Remembers the page's MAC, if the page is cached or was decrypted once before.
void page_table_store_mac(const unsigned char *iv, const unsigned char *ciphertext, int size,
                          const unsigned char *mac_key, int mac_key_size, const unsigned char *page_number,
                          const unsigned char *mac, int mac_size);

/// Copies to `plaintext` the page's plaintext remembered under `key` and `cipher`; 1 if it was there.
int page_table_find_plaintext(const unsigned char *iv, const unsigned char *ciphertext, int size,
                              const unsigned char *key, int key_size, const char *cipher, unsigned char *plaintext);

/// Remembers the page's plaintext, if the page is cached or was decrypted once before; otherwise notes
/// that it now has been.
void page_table_store_plaintext(const unsigned char *iv, const unsigned char *ciphertext, int size,
                                const unsigned char *key, int key_size, const char *cipher,
                                const unsigned char *plaintext);

#endif
