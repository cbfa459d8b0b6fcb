// See segments.h.

#include "segments.h"

#include "CofferTokenizer.h"
#include "utf8.h"

#include <string.h>

void coffer_segments_init(CofferSegments *segments, const char *input, int length) {
    if (input == NULL) length = 0;
    else if (length < 0) length = (int)strlen(input);
    segments->input = (const unsigned char *)input;
    segments->length = length;
}

void coffer_segments_close_inner(CofferSegments *segments) {
    if (segments->inner == NULL) return;
    segments->inner->pTokenizer->pModule->xClose(segments->inner);
    segments->inner = NULL;
}

int coffer_segments_start(CofferSegments *segments, sqlite3_tokenizer *inner) {
    const unsigned char *text = segments->input;
    int end = segments->length, start = segments->offset, at = start, width;
    if (at >= end) return SQLITE_DONE;
    if (segments->stop != 0 && text[at] == segments->stop) return SQLITE_OK;
    int cjk = text[at] >= 0x80 && coffer_is_cjk(coffer_utf8_decode(text + at, end - at, &width));
    while (at < end) {
        if (text[at] < 0x80) {
            if (cjk || (segments->stop != 0 && text[at] == segments->stop)) break;
            at++;
            continue;
        }
        if (coffer_is_cjk(coffer_utf8_decode(text + at, end - at, &width)) != cjk) break;
        at += width;
    }
    segments->offset = at;
    if (cjk) {
        segments->run_next = start;
        segments->run_end = at;
        return SQLITE_OK;
    }
    int rc = inner->pModule->xOpen(inner, (const char *)text + start, at - start, &segments->inner);
    if (rc != SQLITE_OK) return rc;
    segments->inner->pTokenizer = inner;  // as FTS does after xOpen
    segments->inner_base = start;
    return SQLITE_OK;
}

int coffer_segments_next_inner(CofferSegments *segments, const char **token, int *bytes, int *start, int *end,
                               int *position) {
    int rc = segments->inner->pTokenizer->pModule->xNext(segments->inner, token, bytes, start, end, position);
    if (rc == SQLITE_OK) {
        *start += segments->inner_base;
        *end += segments->inner_base;
        *position = segments->position++;
        return SQLITE_OK;
    }
    coffer_segments_close_inner(segments);
    return rc;
}
