// The `coffer_pinyin` and `coffer_identifier` FTS3/FTS4 tokenizers (registered by coffer_fts_register
// beside `coffer`), and the syllable look-up the Swift side uses to split typed pinyin.
#ifndef COFFER_PINYIN_H
#define COFFER_PINYIN_H

/// The pinyin tokenizer's name: `tokenize=coffer_pinyin` (add `"fold=0"` to keep traditional characters
/// apart from simplified ones).
#define COFFER_PINYIN_TOKENIZER_NAME "coffer_pinyin"

/// The identifier tokenizer's name: `tokenize=coffer_identifier`.
#define COFFER_IDENTIFIER_TOKENIZER_NAME "coffer_identifier"

/// The byte that, first in a phrase of a MATCH expression, makes `coffer_pinyin` read the phrase as a
/// query: one token per character (the character itself, folded), no readings. Coffer's pinyin patterns
/// write it; a user's text cannot carry it (patterns turn control characters into spaces).
#define COFFER_PINYIN_QUERY_MARK '\x01'

/// The byte that marks a retroflex initial term. The index holds, at each Han character, after this
/// byte, the `zh`, `ch` or `sh` its readings start with (and at each word starting with them); in a query
/// phrase (after COFFER_PINYIN_QUERY_MARK), this byte and the letters after it are that one term: `\x02zh`
/// finds what `zh*` finds, but as a single term FTS reads incrementally instead of a merge of every term
/// starting with `zh`.
#define COFFER_PINYIN_PREFIX_MARK '\x02'

/// What the `length` lowercase ASCII letters at `text` are among the table's toneless syllables (ü as
/// v): bit 1 when they are a syllable, bit 2 when they start a longer one (`zh` → 2, `zhang` → 1|2,
/// `zhuang` → 1, `zx` → 0).
int coffer_pinyin_syllable_kind(const char *text, int length);

/// The number of readings of code point `c` in the table (after no folding), or 0.
int coffer_pinyin_reading_count(unsigned c);

/// The `index`-th toneless reading of code point `c` (alphabetical order), or NULL past the last one.
const char *coffer_pinyin_reading(unsigned c, int index);

/// The Unicode version of the Unihan data the table was generated from.
const char *coffer_pinyin_unicode_version(void);

#endif
