// Splitting a tokenizer's input into CJK runs and the text between them, which SQLite's `unicode61`
// tokenizer reads: shared by the `coffer` and `coffer_pinyin` cursors (private to CofferTokenizer).

#ifndef COFFER_SEGMENTS_H
#define COFFER_SEGMENTS_H

#include "fts3_interface.h"

/// Where a cursor is in its input: the CJK run being read (its next character and end), or the
/// unicode61 cursor over the text between runs.
typedef struct CofferSegments {
    const unsigned char *input;
    int length;
    int offset;    // where the next segment starts
    int position;  // the next token's position
    // The non-CJK segment being read, if any, and its offset in the input.
    sqlite3_tokenizer_cursor *inner;
    int inner_base;
    // The CJK run being read, if any: the next character's offset and the run's end.
    int run_next;
    int run_end;
    // A byte (other than 0) that ends a non-CJK segment and starts one of its own; 0 for none.
    unsigned char stop;
} CofferSegments;

/// Starts reading `length` bytes of `input` (NULL or a negative length: none or up to a NUL).
void coffer_segments_init(CofferSegments *segments, const char *input, int length);

/// Closes the unicode61 cursor, if one is open.
void coffer_segments_close_inner(CofferSegments *segments);

/// Starts the next segment at segments->offset: a CJK run (run_next/run_end), a segment starting with
/// the stop byte (offset left on it, nothing opened), or the text up to the next of either, read by a
/// unicode61 cursor of `inner`. Returns SQLITE_DONE at the end of the input.
int coffer_segments_start(CofferSegments *segments, sqlite3_tokenizer *inner);

/// The unicode61 cursor's next token, its offsets moved to the whole input and its position the next
/// one. Returns SQLITE_DONE (the cursor closed) when the segment is read, or an error.
int coffer_segments_next_inner(CofferSegments *segments, const char **token, int *bytes, int *start, int *end,
                               int *position);

#endif
