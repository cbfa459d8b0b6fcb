// coffer_bm25(matchinfo(t, 'pcnalx') [, weight of column 0, weight of column 1, …]): the Okapi BM25
// relevance of the current row, higher is better (k1 = 1.2, b = 0.75). Columns without a weight weigh 1.
//
// matchinfo 'pcnalx' is, as 32-bit unsigned integers: p (phrases), c (columns), n (rows), a[c] (average
// tokens per column), l[c] (this row's tokens per column), then for each phrase and column three
// numbers: hits in this row, hits in all rows, rows with a hit.

#include "fts3_interface.h"

#include <math.h>

void coffer_bm25(sqlite3_context *context, int argc, sqlite3_value **argv) {
    if (argc < 1 || sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
        sqlite3_result_error(context, "coffer_bm25 takes matchinfo(table, 'pcnalx') and column weights", -1);
        return;
    }
    const unsigned *info = sqlite3_value_blob(argv[0]);
    int words = sqlite3_value_bytes(argv[0]) / (int)sizeof(unsigned);
    if (words < 3) goto malformed;
    unsigned phrases = info[0], columns = info[1];
    double rows = info[2];
    if ((unsigned long long)words != 3ull + 2ull * columns + 3ull * phrases * columns) goto malformed;
    const unsigned *average = info + 3, *length = info + 3 + columns, *hits = info + 3 + 2 * columns;
    const double k1 = 1.2, b = 0.75;
    double score = 0;
    for (unsigned column = 0; column < columns; column++) {
        double weight = (int)column + 1 < argc ? sqlite3_value_double(argv[column + 1]) : 1.0;
        if (weight == 0) continue;
        double ratio = average[column] > 0 ? (double)length[column] / average[column] : 1.0;
        for (unsigned phrase = 0; phrase < phrases; phrase++) {
            const unsigned *x = hits + 3 * (phrase * columns + column);
            double frequency = x[0], containing = x[2];
            if (frequency == 0) continue;
            double idf = log((rows - containing + 0.5) / (containing + 0.5));
            if (idf < 1e-6) idf = 1e-6;  // a term in most rows still counts a little
            score += weight * idf * frequency * (k1 + 1) / (frequency + k1 * (1 - b + b * ratio));
        }
    }
    sqlite3_result_double(context, score);
    return;
malformed:
    sqlite3_result_error(context, "coffer_bm25: the first argument is not matchinfo(table, 'pcnalx')", -1);
}
