// UTF-8 decoding shared by the tokenizers (private to CofferTokenizer: not in include/).

#ifndef COFFER_UTF8_H
#define COFFER_UTF8_H

/// Decodes the UTF-8 character at `text` (at most `available` bytes): its code point and byte length.
/// An invalid or truncated sequence is one byte, code point 0xFFFD (not CJK, not a letter).
static inline unsigned coffer_utf8_decode(const unsigned char *text, int available, int *length) {
    unsigned c = text[0];
    if (c < 0x80) {
        *length = 1;
        return c;
    }
    int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (n == 0 || n > available) {
        *length = 1;
        return 0xFFFD;
    }
    unsigned value = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((text[i] & 0xC0) != 0x80) {
            *length = 1;
            return 0xFFFD;
        }
        value = (value << 6) | (text[i] & 0x3F);
    }
    *length = n;
    return value;
}

#endif
