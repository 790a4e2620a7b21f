/* The native block scanner: what parsing/plan.py's polars plan computes for one block, in one pass
 * over its lines with the GIL released.
 *
 * Every text it looks for (the request head and opening, the arrival heads and openings, the
 * literals that make a line no routine record or no dense row) comes from the catalog through
 * configure(); this file knows only the shape of a log line: a "YYYY-MM-DD HH:MM:SS,mmm" stamp, and
 * the line tests the plan's regexes make. It reads untrusted bytes: every access is bounded by the
 * line's length, and anything it cannot decide exactly is left to Python.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_search.h"

#define MAX_LITERALS 256

#define MAX_ARRIVALS 16
#define LEVELS 3
#define STAMP_LEN 23

typedef struct {
    char *text;
    Py_ssize_t len;
} literal;

/* A set of literals, any of which may stand anywhere in a line. */
typedef struct {
    literal items[MAX_LITERALS];
    int count;
} literal_set;

/* How one block looks for a set's literals: by a few anchor bytes, each found by one memchr pass
 * over a line, and at each place one is found a test of the literals anchored on it,
 * ``order[first[a]]`` up to ``order[first[a + 1]]``. The anchors are picked for the block from a
 * sample of it (``plan_search``): bytes rare in the text at hand, shared by several literals where
 * that saves passes, whatever the log's words. */
typedef struct {
    const literal_set *set;
    int n_anchors;
    unsigned char anchors[MAX_LITERALS];
    Py_ssize_t offset[MAX_LITERALS]; /* by literal: where its anchor stands in it */
    short order[MAX_LITERALS];
    short first[MAX_LITERALS + 1];
} search_plan;

#define SAMPLE_BYTES (64 * 1024)
#define FINGERPRINT_SAMPLE (16 * 1024) /* enough to tell a common window of three bytes from a rare one */

typedef struct {
    literal head;
    literal opening;
} arrival_shape;

/* What a line's finds say of it: the sets of literals it holds one of. */
enum { NOT_ROUTINE_TAG = 1, NOT_DENSE_TAG = 2 };

static struct {
    int ready;
    literal_set debug, not_routine, not_dense, interesting;
    fingerprints flagged; /* the not_routine and not_dense literals, each once, tagged with the sets holding it */
    finder find;          /* the fastest version of the search this CPU runs */
    literal level_marker[LEVELS];
    literal request_head, request_id, request_opening;
    literal model_open, model_close, tokens_close, seconds_close; /* the chat counts' fixed parts */
    arrival_shape arrivals[MAX_ARRIVALS];
    int n_arrivals;
    Py_ssize_t max_line;
    int first_year, end_year;
} cfg;

/* How common a byte is in log text, lowest first: the anchor of a literal is its rarest byte. */
static int commonness(unsigned char c) {
    if (c == ' ') return 100;
    if (c && strchr("DEBUGINFO", c)) return 25; /* the letters of the commonest levels */
    if (strchr("etaoinsrldcum", c) && c) return 60;
    if (c >= '0' && c <= '9') return 50;
    if (c == '-') return 45;
    if (c >= 'a' && c <= 'z') return 30;
    if (c == '.' || c == ',' || c == ':' || c == '_' || c == '/') return 35;
    if (c >= 'A' && c <= 'Z') return 10;
    return 5;
}

static int copy_literal(PyObject *bytes, literal *out) {
    char *text;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(bytes, &text, &len) < 0) return -1;
    if (len == 0) {
        PyErr_SetString(PyExc_ValueError, "empty literal");
        return -1;
    }
    out->text = PyMem_RawMalloc(len);
    if (out->text == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(out->text, text, len);
    out->len = len;
    return 0;
}

static int copy_set(PyObject *tuple, literal_set *out) {
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) > MAX_LITERALS) {
        PyErr_SetString(PyExc_ValueError, "a tuple of at most 256 literals expected");
        return -1;
    }
    out->count = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        if (copy_literal(PyTuple_GET_ITEM(tuple, i), &out->items[out->count]) < 0) return -1;
        out->count++;
    }
    return 0;
}

/* A memchr pass over a line costs about as much as this many places where its byte is found. */
#define PASS_COST 4

/* Add ``step`` to ``holding[b]`` for each distinct byte b of the literal. */
static void count_bytes_of(const literal *lit, size_t holding[256], int step) {
    unsigned char seen[256] = {0};
    for (Py_ssize_t i = 0; i < lit->len; i++) seen[(unsigned char)lit->text[i]] = 1;
    for (int b = 0; b < 256; b++)
        if (seen[b]) holding[b] += (size_t)step;
}

/* The plan for ``set`` in a block whose sample of ``lines`` lines holds byte b ``counts[b]`` times:
 * a greedy cover of the literals by anchor bytes, each next anchor the byte with the least cost
 * (a pass a line, and at each place it is found a test of each literal it would anchor) per literal
 * it newly covers. */
static void plan_search(const literal_set *set, const size_t counts[256], size_t lines, search_plan *plan) {
    unsigned char anchor_of[MAX_LITERALS], covered[MAX_LITERALS] = {0};
    size_t holding[256] = {0}; /* by byte: the literals not yet covered that hold it */
    for (int k = 0; k < set->count; k++) count_bytes_of(&set->items[k], holding, 1);
    plan->set = set;
    plan->n_anchors = 0;
    for (int left = set->count; left > 0;) {
        int best = -1;
        for (int b = 0; b < 256; b++) {
            if (holding[b] == 0) continue;
            size_t cost = PASS_COST * lines + counts[b] * holding[b];
            size_t best_cost = best < 0 ? 0 : PASS_COST * lines + counts[best] * holding[best];
            /* cost / holding[b] < best_cost / holding[best], the rarer kind of byte winning a tie */
            if (best < 0 || cost * holding[best] < best_cost * holding[b] ||
                (cost * holding[best] == best_cost * holding[b] && commonness((unsigned char)b) < commonness((unsigned char)best)))
                best = b;
        }
        plan->anchors[plan->n_anchors++] = (unsigned char)best;
        for (int k = 0; k < set->count; k++) {
            const char *hit = covered[k] ? NULL : memchr(set->items[k].text, best, set->items[k].len);
            if (hit == NULL) continue;
            covered[k] = 1;
            left--;
            anchor_of[k] = (unsigned char)best;
            plan->offset[k] = hit - set->items[k].text;
            count_bytes_of(&set->items[k], holding, -1);
        }
    }
    int next = 0;
    for (int a = 0; a < plan->n_anchors; a++) {
        plan->first[a] = (short)next;
        for (int k = 0; k < set->count; k++)
            if (anchor_of[k] == plan->anchors[a]) plan->order[next++] = (short)k;
    }
    plan->first[plan->n_anchors] = (short)next;
}

static int at(const char *s, Py_ssize_t n, Py_ssize_t pos, const literal *lit) {
    return pos >= 0 && pos <= n - lit->len && s[pos] == lit->text[0] && s[pos + lit->len - 1] == lit->text[lit->len - 1] &&
           memcmp(s + pos, lit->text, lit->len) == 0;
}

static int contains_any(const search_plan *plan, const char *s, Py_ssize_t n) {
    for (int a = 0; a < plan->n_anchors; a++) {
        const char *p = s, *end = s + n;
        while (p < end && (p = memchr(p, plan->anchors[a], end - p)) != NULL) {
            Py_ssize_t hit = p - s;
            for (int k = plan->first[a]; k < plan->first[a + 1]; k++) {
                int item = plan->order[k];
                if (at(s, n, hit - plan->offset[item], &plan->set->items[item])) return 1;
            }
            p++;
        }
    }
    return 0;
}

static int contains(const literal *lit, const char *s, Py_ssize_t n) {
    return n >= lit->len && memmem(s, n, lit->text, lit->len) != NULL;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int digits(const char *s, Py_ssize_t from, Py_ssize_t to) {
    for (Py_ssize_t i = from; i < to; i++)
        if (!is_digit(s[i])) return 0;
    return 1;
}

/* plan.DATED_LINE: "^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[,.][0-9]{1,6})?"
 * then "[ \t]*[-—][ \t]*" or "[ \t]+", that is a blank, '-' or an em dash right after. */
static int separator_at(const char *s, Py_ssize_t n, Py_ssize_t p) {
    if (p >= n) return 0;
    if (s[p] == ' ' || s[p] == '\t' || s[p] == '-') return 1;
    return p + 2 < n && (unsigned char)s[p] == 0xE2 && (unsigned char)s[p + 1] == 0x80 && (unsigned char)s[p + 2] == 0x94;
}

static int dated(const char *s, Py_ssize_t n) {
    if (n < 20) return 0;
    if (!(digits(s, 0, 4) && s[4] == '-' && digits(s, 5, 7) && s[7] == '-' && digits(s, 8, 10))) return 0;
    if (!((s[10] == ' ' || s[10] == 'T') && digits(s, 11, 13) && s[13] == ':' && digits(s, 14, 16) && s[16] == ':'))
        return 0;
    if (!digits(s, 17, 19)) return 0;
    if (separator_at(s, n, 19)) return 1;
    if (s[19] != ',' && s[19] != '.') return 0;
    Py_ssize_t run = 0;
    while (20 + run < n && is_digit(s[20 + run])) run++;
    return run >= 1 && run <= 6 && separator_at(s, n, 20 + run);
}

static int num(const char *s, Py_ssize_t from, Py_ssize_t len) {
    int value = 0;
    for (Py_ssize_t i = from; i < from + len; i++) value = value * 10 + (s[i] - '0');
    return value;
}

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The plan's time parse ("%Y-%m-%d %H:%M:%S,%3f" on the first 23 characters) and its checks on it
 * (a plausible year, no second 60): milliseconds since 1970, or -1. Only ASCII digits at fixed
 * places are taken; a stamp polars would also read otherwise is no dense line (see dated()). */
typedef struct {
    char date[10]; /* the last date read, as written */
    int64_t ms;    /* its midnight in ms since 1970, or -1 for no real date */
} day_cache;

/* The ms of a "YYYY-MM-DD" date's midnight, or -1: a plausible year, a real day. */
static int64_t date_ms(const char *s) {
    if (!(digits(s, 0, 4) && digits(s, 5, 7) && digits(s, 8, 10))) return -1;
    int year = num(s, 0, 4), month = num(s, 5, 2), day = num(s, 8, 2);
    static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (year < cfg.first_year || year >= cfg.end_year || month < 1 || month > 12 || day < 1) return -1;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] + (month == 2 && leap)) return -1;
    return days_from_civil(year, month, day) * 86400000;
}

static int64_t stamp_ms(const char *s, Py_ssize_t n, day_cache *days) {
    if (n < STAMP_LEN || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' || s[19] != ',')
        return -1;
    if (memcmp(s, days->date, sizeof days->date) != 0) { /* most lines are of the day before them */
        memcpy(days->date, s, sizeof days->date);
        days->ms = date_ms(s);
    }
    if (days->ms < 0 || !(digits(s, 11, 13) && digits(s, 14, 16) && digits(s, 17, 19) && digits(s, 20, 23)))
        return -1;
    int hour = num(s, 11, 2), minute = num(s, 14, 2), second = num(s, 17, 2), ms = num(s, 20, 3);
    if (hour > 23 || minute > 59 || second > 59) return -1;
    return days->ms + hour * 3600000LL + minute * 60000LL + second * 1000LL + ms;
}

/* Where the text after a head goes on: past the request-id field of a record outside a request, if
 * any, when ``opening`` follows; -1 when it does not. */
static Py_ssize_t after_opening(const char *s, Py_ssize_t n, Py_ssize_t start, const literal *opening) {
    if (at(s, n, start, opening)) return start + opening->len;
    if (at(s, n, start, &cfg.request_id) && at(s, n, start + cfg.request_id.len, opening))
        return start + cfg.request_id.len + opening->len;
    return -1;
}

/* The chat counts' regex, "(?:model=([^,]+), )?([0-9]+) tokens in ([0-9.]+)s", anchored at ``p``:
 * the tokens when they fit an Int32, else -1. */
static int64_t chat_tokens(const char *s, Py_ssize_t n, Py_ssize_t p) {
    if (at(s, n, p, &cfg.model_open)) {
        Py_ssize_t q = p + cfg.model_open.len;
        const char *comma = q < n ? memchr(s + q, ',', (size_t)(n - q)) : NULL;
        Py_ssize_t r = comma ? comma - s : n;
        if (r == q || !at(s, n, r, &cfg.model_close)) return -1;
        p = r + cfg.model_close.len;
    }
    Py_ssize_t q = p;
    int64_t value = 0;
    while (q < n && is_digit(s[q])) {
        if (value <= INT32_MAX) value = value * 10 + (s[q] - '0');
        q++;
    }
    if (q == p || !at(s, n, q, &cfg.tokens_close)) return -1;
    Py_ssize_t r = q + cfg.tokens_close.len, t = r;
    while (t < n && (is_digit(s[t]) || s[t] == '.')) t++;
    if (t == r || !at(s, n, t, &cfg.seconds_close)) return -1;
    return value <= INT32_MAX ? value : -1;
}

/* plan.LEVEL_RECORD: "^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ - [\w.]+ - LEVEL - ". polars reads
 * \d and \w as Unicode classes: 1 match, 0 none, -1 when a non-ASCII byte stands where a class
 * could take it (Python decides those). */
static int level_record(const char *s, Py_ssize_t n, const literal *marker) {
    static const char shape[] = "dddd-dd-dd?dd:dd:dd";
    Py_ssize_t i = 0;
    for (; shape[i]; i++) {
        if (i >= n) return 0;
        unsigned char c = (unsigned char)s[i];
        if (shape[i] == 'd') {
            if (c >= 0x80) return -1;
            if (!is_digit(c)) return 0;
        } else if (shape[i] == '?') {
            if (c != ' ' && c != 'T') return 0;
        } else if (c != (unsigned char)shape[i]) {
            return 0;
        }
    }
    if (i >= n || (s[i] != ',' && s[i] != '.')) return 0;
    Py_ssize_t q = ++i;
    while (i < n && is_digit(s[i])) i++;
    if (i < n && (unsigned char)s[i] >= 0x80) return -1;
    if (i == q || !(i + 3 <= n && memcmp(s + i, " - ", 3) == 0)) return 0;
    q = i += 3;
    while (i < n && (is_digit(s[i]) || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_' ||
                     s[i] == '.'))
        i++;
    if (i < n && (unsigned char)s[i] >= 0x80) return -1;
    return i > q && at(s, n, i, marker);
}

typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} buffer;

static void put(buffer *b, const void *item, size_t size) {
    if (b->failed) return;
    if (b->len + size > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + size) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (grown == NULL) {
            b->failed = 1;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, item, size);
    b->len += size;
}

static void put_i64(buffer *b, int64_t v) { put(b, &v, sizeof v); }
static void put_u32(buffer *b, uint32_t v) { put(b, &v, sizeof v); }
static void put_i32(buffer *b, int32_t v) { put(b, &v, sizeof v); }
static void put_u8(buffer *b, uint8_t v) { put(b, &v, sizeof v); }

enum { EDGES, REQ_N, REQ_MS, REQ_TOKENS, ARR_N, ARR_MS, ARR_FORM, KEPT, UNDECIDED, BUFFERS };

typedef struct {
    buffer out[BUFFERS];
    Py_ssize_t lines;
    int not_utf8; /* then no text is made of it: the caller mends it */
    day_cache days;
    int any_debug;
    int levels; /* bit L: a record of level L among the lines that are neither routine nor dense */
} block_result;

/* The block's search plans, from the bytes of its first SAMPLE_BYTES: the few lines that may be
 * worth the grammar's look are searched one at a time; the literals every line is tested for are
 * found in one pass over the block (``_search.h``). */
typedef struct {
    search_plan debug, interesting;
    fingerprints flagged;
} block_plans;

static int plan_block(const char *s, Py_ssize_t n, block_plans *plans) {
    size_t counts[256] = {0}, lines = 1;
    const unsigned char *u = (const unsigned char *)s;
    Py_ssize_t sample = n < SAMPLE_BYTES ? n : SAMPLE_BYTES;
    for (Py_ssize_t i = 0; i < sample; i++) counts[u[i]]++;
    lines += counts['\n'];
    plan_search(&cfg.debug, counts, lines, &plans->debug);
    plan_search(&cfg.interesting, counts, lines, &plans->interesting);
    plans->flagged = cfg.flagged;
    return plan_fingerprints(&plans->flagged, u, sample < FINGERPRINT_SAMPLE ? sample : FINGERPRINT_SAMPLE);
}

/* A line of the block: its bytes [start, stop), a trailing '\r' left out as polars does. */
typedef struct {
    Py_ssize_t start, stop;
    int timed;
    unsigned char tags; /* the sets of flagged literals it holds one of */
} line;

/* The block's flagged literals and newlines, found a stretch of whole lines at a time, so the
 * lines are still in the cache when they are split and classified. */
typedef struct {
    const fingerprints *plan;
    Py_ssize_t searched; /* the stretch searched so far ends here, at a line's start */
    found_list found;
    size_t taken; /* found.items[taken] is the first find no line has had */
    marks marks;  /* the stretch's newlines, and whether it is all ASCII */
    size_t marks_cap;
    int not_utf8, failed; /* a stretch is not UTF-8; memory ran out */
} finds;

#define STRETCH_BYTES (64 * 1024)

static int valid_utf8(const unsigned char *s, Py_ssize_t n);

/* Search the stretch of whole lines from ``start``, a line's start. */
static void search_stretch(finds *fd, const char *s, Py_ssize_t n, Py_ssize_t start) {
    Py_ssize_t to = start + STRETCH_BYTES;
    const char *nl = to < n ? memchr(s + to, '\n', n - to) : NULL;
    to = nl ? nl - s + 1 : n;
    size_t need = (size_t)(to - start) / 8 + 8; /* and 8 more: the newline search reads whole words */
    if (need > fd->marks_cap) {
        uint8_t *grown = realloc(fd->marks.newlines, need);
        if (grown == NULL) {
            fd->failed = 1;
            need = 0;
            to = start; /* nothing searched: the block fails */
        } else {
            fd->marks.newlines = grown;
            fd->marks_cap = need;
        }
    }
    fd->found.len = 0;
    fd->taken = 0;
    fd->searched = to;
    if (fd->failed) return;
    memset(fd->marks.newlines, 0, need);
    fd->marks.base = start;
    fd->marks.wide = 0;
    cfg.find(fd->plan, s, n, start, to, &fd->found, &fd->marks);
    /* checked here, where it is in the cache, and only past ASCII; no character runs over a newline */
    if (fd->marks.wide && !valid_utf8((const unsigned char *)s + start, to - start)) fd->not_utf8 = 1;
}

/* Where the first newline at or after ``start`` in the stretch is, or -1. */
static Py_ssize_t newline_from(const finds *fd, Py_ssize_t start) {
    Py_ssize_t bit = start - fd->marks.base, bits = fd->searched - fd->marks.base;
    while (bit < bits) {
        uint64_t word;
        memcpy(&word, fd->marks.newlines + (bit >> 3), sizeof word);
        word >>= bit & 7;
        if (word) {
            Py_ssize_t at = bit + __builtin_ctzll(word);
            return at < bits ? fd->marks.base + at : -1;
        }
        bit += 64 - (bit & 7);
    }
    return -1;
}

/* The tags of the finds in line ``l``, which ends before ``after``: a literal holds no newline, so
 * each find lies in the line its window starts in; one running past ``stop`` took the '\r'. */
static unsigned char tags_of(finds *fd, const line *l, Py_ssize_t after) {
    unsigned char tags = 0;
    for (; fd->taken < fd->found.len && fd->found.items[fd->taken].at < after; fd->taken++)
        if (fd->found.items[fd->taken].end <= l->stop) tags |= fd->found.items[fd->taken].tags;
    return tags;
}

/* The line that begins at ``*pos``, if there is one; ``*pos`` moves past it. */
static int next_line(const char *s, Py_ssize_t n, Py_ssize_t *pos, finds *fd, line *out) {
    Py_ssize_t start = *pos;
    if (start >= n || fd->failed) return 0;
    if (start >= fd->searched) search_stretch(fd, s, n, start);
    if (fd->failed) return 0;
    Py_ssize_t nl = newline_from(fd, start), end = nl < 0 ? n : nl;
    *pos = nl < 0 ? n : end + 1;
    out->start = start;
    out->stop = end > start && s[end - 1] == '\r' ? end - 1 : end;
    out->timed = dated(s + start, out->stop - start);
    out->tags = tags_of(fd, out, *pos);
    return 1;
}

/* Whether the line holds a DEBUG marker: first where a record's level stands (after the stamp,
 * " - " and the logger's name, at the next blank), which most DEBUG lines of a DEBUG log pass;
 * then anywhere. */
static int holds_debug(const block_plans *plans, const char *s, Py_ssize_t n) {
    if (n > STAMP_LEN + 3 && s[STAMP_LEN] == ' ' && s[STAMP_LEN + 1] == '-' && s[STAMP_LEN + 2] == ' ') {
        const char *blank = memchr(s + STAMP_LEN + 3, ' ', (size_t)(n - STAMP_LEN - 3));
        for (int k = 0; blank != NULL && k < cfg.debug.count; k++)
            if (at(s, n, blank - s, &cfg.debug.items[k])) return 1;
    }
    return contains_any(&plans->debug, s, n);
}

/* One line, ``single`` when it and its neighbours are timed (a one-line record): counted as
 * routine, filed as a dense row, or kept for the grammar with the line before it. */
static void classify(const char *data, const block_plans *plans, const line *cur, const line *prev, int single,
                     uint32_t line_no, block_result *r) {
    const char *s = data + cur->start;
    Py_ssize_t n = cur->stop - cur->start;
    int debug = holds_debug(plans, s, n);
    r->any_debug |= debug;
    if (single && debug && !(cur->tags & NOT_ROUTINE_TAG)) return; /* routine: counted only */
    if (single && n <= cfg.max_line) {
        int64_t ms = stamp_ms(s, n, &r->days);
        if (ms >= 0 && !(cur->tags & NOT_DENSE_TAG)) {
            if (at(s, n, STAMP_LEN, &cfg.request_head)) {
                Py_ssize_t p = after_opening(s, n, STAMP_LEN + cfg.request_head.len, &cfg.request_opening);
                int64_t tokens = p < 0 ? -1 : chat_tokens(s, n, p);
                if (tokens >= 0) {
                    put_u32(&r->out[REQ_N], line_no);
                    put_i64(&r->out[REQ_MS], ms);
                    put_i32(&r->out[REQ_TOKENS], (int32_t)tokens);
                    return;
                }
            }
            for (int a = 0; a < cfg.n_arrivals; a++) {
                const arrival_shape *shape = &cfg.arrivals[a];
                if (at(s, n, STAMP_LEN, &shape->head) &&
                    after_opening(s, n, STAMP_LEN + shape->head.len, &shape->opening) >= 0) {
                    put_u32(&r->out[ARR_N], line_no);
                    put_i64(&r->out[ARR_MS], ms);
                    put_u8(&r->out[ARR_FORM], (uint8_t)a);
                    return;
                }
            }
        }
    }
    for (int level = 0; level < LEVELS; level++) {
        if (r->levels & (1 << level) || !contains(&cfg.level_marker[level], s, n)) continue;
        int found = level_record(s, n, &cfg.level_marker[level]);
        if (found > 0) r->levels |= 1 << level;
        if (found < 0) {
            put_i64(&r->out[UNDECIDED], level);
            put_i64(&r->out[UNDECIDED], cur->start);
            put_i64(&r->out[UNDECIDED], cur->stop);
        }
    }
    if (!single || contains_any(&plans->interesting, s, n)) {
        put_i64(&r->out[KEPT], line_no);
        put_i64(&r->out[KEPT], cur->start);
        put_i64(&r->out[KEPT], cur->stop);
        put_i64(&r->out[KEPT], prev ? prev->start : -1);
        put_i64(&r->out[KEPT], prev ? prev->stop : -1);
    }
}

/* The block's lines in one pass, each classified once the line after it is split off (a line is
 * a one-line record only when its neighbours are timed too). */
static void scan_lines(const char *data, Py_ssize_t n, int prev_timed, int next_timed, block_result *r) {
    block_plans *plans = malloc(sizeof *plans); /* too large for a small thread stack */
    if (plans == NULL || plan_block(data, n, plans) < 0) {
        free(plans);
        r->out[EDGES].failed = 1;
        return;
    }
    finds fd = {.plan = &plans->flagged};
    line lines[3]; /* the one before, this one, the next: rotated */
    line *prev = NULL, *cur = &lines[0], *next = &lines[1], *spare = &lines[2];
    Py_ssize_t pos = 0;
    if (next_line(data, n, &pos, &fd, cur)) {
        put_i64(&r->out[EDGES], cur->start);
        put_i64(&r->out[EDGES], cur->stop);
        for (;;) {
            int more = next_line(data, n, &pos, &fd, next);
            r->lines++;
            int single = cur->timed && (more ? next->timed : next_timed) && (prev ? prev->timed : prev_timed);
            classify(data, plans, cur, prev, single, (uint32_t)r->lines, r);
            if (!more) break;
            line *gone = prev ? prev : spare;
            prev = cur;
            cur = next;
            next = gone;
        }
        put_i64(&r->out[EDGES], cur->start);
        put_i64(&r->out[EDGES], cur->stop);
    }
    r->out[EDGES].failed |= fd.found.failed | fd.failed;
    r->not_utf8 = fd.not_utf8;
    free(fd.found.items);
    free(fd.marks.newlines);
    free(plans);
}

/* The text of the block's bytes [start, stop): UTF-8, as the scan checked (or the caller mended). */
static PyObject *text_of(const char *data, int64_t start, int64_t stop) {
    return PyUnicode_DecodeUTF8(data + start, (Py_ssize_t)(stop - start), "strict");
}

/* (first line, last line) of the block, or (None, None) for a block of no lines. */
static PyObject *edge_texts(const char *data, const buffer *edges) {
    if (edges->len < 4 * sizeof(int64_t)) return PyTuple_Pack(2, Py_None, Py_None);
    const int64_t *e = (const int64_t *)edges->data;
    PyObject *first = text_of(data, e[0], e[1]);
    PyObject *last = first ? text_of(data, e[2], e[3]) : NULL; /* no call with an exception set */
    PyObject *pair = first && last ? PyTuple_Pack(2, first, last) : NULL;
    Py_XDECREF(first);
    Py_XDECREF(last);
    return pair;
}

/* The kept lines as (line number, text, the text of the line before it in the block or None):
 * made here, where a Python loop would hold the GIL ten times as long. */
static PyObject *kept_rows(const char *data, const buffer *kept) {
    const int64_t *k = (const int64_t *)kept->data;
    Py_ssize_t count = (Py_ssize_t)(kept->len / (5 * sizeof(int64_t)));
    PyObject *rows = PyList_New(count);
    for (Py_ssize_t i = 0; rows != NULL && i < count; i++, k += 5) {
        PyObject *n = PyLong_FromLongLong(k[0]); /* each made only if the one before was: no call with an exception set */
        PyObject *text = n ? text_of(data, k[1], k[2]) : NULL;
        PyObject *before = !text ? NULL : k[3] >= 0 ? text_of(data, k[3], k[4]) : Py_NewRef(Py_None);
        PyObject *row = n && text && before ? PyTuple_Pack(3, n, text, before) : NULL;
        Py_XDECREF(n);
        Py_XDECREF(text);
        Py_XDECREF(before);
        if (row == NULL) Py_CLEAR(rows);
        else PyList_SET_ITEM(rows, i, row);
    }
    return rows;
}

static PyObject *scan_block(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    int prev_timed, next_timed;
    if (!PyArg_ParseTuple(args, "y*pp", &view, &prev_timed, &next_timed)) return NULL;
    if (!cfg.ready) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    block_result r;
    memset(&r, 0, sizeof r);
    Py_BEGIN_ALLOW_THREADS
    scan_lines(view.buf, view.len, prev_timed, next_timed, &r);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    int failed = 0;
    for (int b = 0; b < BUFFERS; b++) failed |= r.out[b].failed;
    if (r.not_utf8) {
        result = Py_NewRef(Py_None);
    } else if (failed) {
        PyErr_NoMemory();
    } else {
        result = PyTuple_New(BUFFERS + 3);
        for (int b = 0; result != NULL && b < BUFFERS; b++) {
            PyObject *item = b == EDGES  ? edge_texts(view.buf, &r.out[b])
                             : b == KEPT ? kept_rows(view.buf, &r.out[b])
                                         : PyBytes_FromStringAndSize(r.out[b].data ? r.out[b].data : "",
                                                                     (Py_ssize_t)r.out[b].len);
            if (item == NULL) Py_CLEAR(result);
            else PyTuple_SET_ITEM(result, b, item);
        }
        PyObject *tail[] = {PyLong_FromSsize_t(r.lines), PyBool_FromLong(r.any_debug), PyLong_FromLong(r.levels)};
        for (int t = 0; t < 3; t++) {
            if (result != NULL && tail[t] != NULL) {
                PyTuple_SET_ITEM(result, BUFFERS + t, tail[t]);
            } else {
                Py_XDECREF(tail[t]);
                Py_CLEAR(result);
            }
        }
    }
    PyBuffer_Release(&view);
    for (int b = 0; b < BUFFERS; b++) free(r.out[b].data);
    return result;
}

/* Whole-column loops for the dense tables (parsing/dense.py), on columns of any size: what numpy
 * would do past its BIG rows, without the import a big log's run would otherwise pay for these
 * few. A column is any buffer of native integers: an array.array of the dense tables' typecodes. */

/* A column: its buffer, its length, and how an item is read (its size, and whether signed). */
typedef struct {
    Py_buffer view;
    Py_ssize_t count;
    int kind; /* the item's size in bytes, negative when signed */
} column;

static int column_of(PyObject *object, column *c) {
    if (PyObject_GetBuffer(object, &c->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = c->view.format ? c->view.format : "B";
    if (strchr("bBhHiIlLqQ", f[0]) == NULL || f[1] != '\0') {
        PyBuffer_Release(&c->view);
        PyErr_Format(PyExc_TypeError, "a column of integers expected, not format %s", f);
        return -1;
    }
    c->count = c->view.len / c->view.itemsize;
    c->kind = strchr("bhilq", f[0]) ? -(int)c->view.itemsize : (int)c->view.itemsize;
    return 0;
}

/* Item i of a column, as int64 (a uint64 past INT64_MAX wraps, as numpy's int64 view would); read
 * by memcpy, as a buffer need not be aligned. */
#define ITEM_AS(type) \
    do { \
        type v; \
        memcpy(&v, p + i * (Py_ssize_t)sizeof v, sizeof v); \
        return (int64_t)v; \
    } while (0)
static int64_t item(const column *c, Py_ssize_t i) {
    const char *p = (const char *)c->view.buf;
    switch (c->kind) {
    case -1: ITEM_AS(int8_t);
    case 1: ITEM_AS(uint8_t);
    case -2: ITEM_AS(int16_t);
    case 2: ITEM_AS(uint16_t);
    case -4: ITEM_AS(int32_t);
    case 4: ITEM_AS(uint32_t);
    default: ITEM_AS(int64_t);
    }
}
#undef ITEM_AS

/* shifted(numbers, by) -> bytes of uint32: a block's line numbers, a uint32 column, with ``by``
 * added to each; OverflowError past the type's range. A Python loop over a big log's million rows
 * would hold the GIL the scan's other work needs. */
static PyObject *shifted(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *object;
    long long by;
    column c;
    if (!PyArg_ParseTuple(args, "OL", &object, &by) || column_of(object, &c) < 0) return NULL;
    PyObject *out = NULL;
    if (c.kind != 4) {
        PyErr_SetString(PyExc_ValueError, "a column of uint32 expected");
    } else if (by < 0 || by > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a shift outside 0 .. 2**32 - 1");
    } else if ((out = PyBytes_FromStringAndSize(NULL, c.count * (Py_ssize_t)sizeof(uint32_t))) != NULL) {
        char *to = PyBytes_AS_STRING(out);
        int64_t most = 0;
        for (Py_ssize_t i = 0; i < c.count; i++) {
            int64_t n = item(&c, i);
            most = n > most ? n : most;
            uint32_t moved = (uint32_t)(n + by);
            memcpy(to + i * (Py_ssize_t)sizeof moved, &moved, sizeof moved);
        }
        if (most + by > UINT32_MAX) {
            Py_CLEAR(out);
            PyErr_SetString(PyExc_OverflowError, "a line number past 2**32 - 1");
        }
    }
    PyBuffer_Release(&c.view);
    return out;
}

static PyObject *is_sorted(PyObject *Py_UNUSED(self), PyObject *arg) {
    column c;
    if (column_of(arg, &c) < 0) return NULL;
    Py_ssize_t i = 1;
    for (; i < c.count && item(&c, i - 1) <= item(&c, i); i++) {}
    PyBuffer_Release(&c.view);
    return PyBool_FromLong(i >= c.count);
}

/* time_span(column, null) -> (least, greatest) of the values other than ``null``, or None. */
static PyObject *time_span(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *object;
    long long null;
    column c;
    if (!PyArg_ParseTuple(args, "OL", &object, &null) || column_of(object, &c) < 0) return NULL;
    int64_t least = INT64_MAX, greatest = INT64_MIN;
    int any = 0;
    for (Py_ssize_t i = 0; i < c.count; i++) {
        int64_t v = item(&c, i);
        if (v == null) continue;
        any = 1;
        least = v < least ? v : least;
        greatest = v > greatest ? v : greatest;
    }
    PyBuffer_Release(&c.view);
    if (!any) Py_RETURN_NONE;
    return Py_BuildValue("(LL)", (long long)least, (long long)greatest);
}

/* count_before(sources, lines, source, line) -> how many rows are of ``source`` before ``line``. */
static PyObject *count_before(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *objects[2];
    long long source, line;
    if (!PyArg_ParseTuple(args, "OOLL", &objects[0], &objects[1], &source, &line)) return NULL;
    column c[2];
    if (column_of(objects[0], &c[0]) < 0) return NULL;
    if (column_of(objects[1], &c[1]) < 0) {
        PyBuffer_Release(&c[0].view);
        return NULL;
    }
    Py_ssize_t count = 0;
    if (c[0].count != c[1].count) {
        PyErr_SetString(PyExc_ValueError, "sources and lines of different lengths");
        count = -1;
    }
    for (Py_ssize_t i = 0; count >= 0 && i < c[0].count; i++) count += item(&c[0], i) == source && item(&c[1], i) < line;
    PyBuffer_Release(&c[0].view);
    PyBuffer_Release(&c[1].view);
    return count < 0 ? NULL : PyLong_FromSsize_t(count);
}

/* prefix_sums(column) -> bytes of int64: [i] the sum of the first i values. */
static PyObject *prefix_sums(PyObject *Py_UNUSED(self), PyObject *arg) {
    column c;
    if (column_of(arg, &c) < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (c.count + 1) * (Py_ssize_t)sizeof(int64_t));
    if (out != NULL) {
        int64_t sum = 0;
        char *to = PyBytes_AS_STRING(out);
        memcpy(to, &sum, sizeof sum);
        for (Py_ssize_t i = 0; i < c.count; i++) {
            sum = (int64_t)((uint64_t)sum + (uint64_t)item(&c, i)); /* wraps as numpy's cumsum */
            memcpy(to + (i + 1) * (Py_ssize_t)sizeof sum, &sum, sizeof sum);
        }
    }
    PyBuffer_Release(&c.view);
    return out;
}

/* falls(lines, times, more_lines, more_times, more_than) -> [(line, before, time)]: where the
 * times of two tables merged in line order (each in line order; a row of ``more`` goes before a
 * row of the first at the same line) go back by more than ``more_than``, exactly. */
/* The time of the merged row ``k`` at ``line``, after one at ``before``: a fall past ``more_than``
 * is added to ``list``, which is dropped (set to NULL at ``into``) when memory runs out. */
static int64_t fall(PyObject *list, int64_t line, int64_t before, int64_t now, Py_ssize_t k, long long more_than,
                    PyObject **into) {
    if (k > 0 && before > now && (uint64_t)before - (uint64_t)now > (uint64_t)more_than) {
        PyObject *row = Py_BuildValue("(LLL)", (long long)line, (long long)before, (long long)now);
        if (row == NULL || PyList_Append(list, row) < 0) Py_CLEAR(*into);
        Py_XDECREF(row);
    }
    return now;
}

static PyObject *falls(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *objects[4];
    long long more_than;
    if (!PyArg_ParseTuple(args, "OOOOL", &objects[0], &objects[1], &objects[2], &objects[3], &more_than)) return NULL;
    column c[4];
    int got = 0;
    for (; got < 4; got++)
        if (column_of(objects[got], &c[got]) < 0) break;
    PyObject *found = NULL;
    if (got == 4 && more_than < 0) {
        PyErr_SetString(PyExc_ValueError, "more_than must be at least 0");
    } else if (got == 4 && (c[0].count != c[1].count || c[2].count != c[3].count)) {
        PyErr_SetString(PyExc_ValueError, "lines and times of different lengths");
    } else if (got == 4) {
        found = PyList_New(0);
        Py_ssize_t n = c[0].count, m = c[2].count, i = 0, j = 0, k = 0;
        int64_t before = 0;
        while (found != NULL && (i < n || j < m)) {
            /* the first table's rows up to the next row of ``more``, then that row */
            int64_t stop = j < m ? item(&c[2], j) : INT64_MAX;
            for (; found != NULL && i < n && item(&c[0], i) < stop; i++, k++)
                before = fall(found, item(&c[0], i), before, item(&c[1], i), k, more_than, &found);
            if (found != NULL && j < m) before = fall(found, stop, before, item(&c[3], j++), k++, more_than, &found);
        }
    }
    for (int v = 0; v < got; v++) PyBuffer_Release(&c[v].view);
    return found;
}

/* Whether the bytes are UTF-8 as Python's strict decoder takes it (no overlong forms, no
 * surrogates, nothing past U+10FFFF), without making the str a decode would. */
static int valid_utf8(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (i + 64 <= n) { /* 64 bytes of ASCII at once: a loop the compiler makes vector code of */
            uint64_t words[8], any = 0;
            memcpy(words, s + i, sizeof words);
            for (int w = 0; w < 8; w++) any |= words[w];
            if (!(any & 0x8080808080808080ULL)) {
                i += 64;
                continue;
            }
        }
        if (i + 8 <= n) {
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (!(word & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int more;
        unsigned char low = 0x80, high = 0xBF; /* the bounds of the byte after a lead byte */
        if (c >= 0xC2 && c <= 0xDF) more = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0) low = 0xA0;
            if (c == 0xED) high = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0) low = 0x90;
            if (c == 0xF4) high = 0x8F;
        } else return 0;
        if (i + more >= n) return 0; /* cut short */
        if (s[i + 1] < low || s[i + 1] > high) return 0;
        for (int k = 2; k <= more; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
        i += more + 1;
    }
    return 1;
}

/* Add the set's literals to the flagged ones, each literal once with the tags of every set holding it.
 * One with a newline is left out: no line holds it. */
static int flag(const literal_set *set, unsigned char tag) {
    fingerprints *f = &cfg.flagged;
    for (int i = 0; i < set->count; i++) {
        const literal *lit = &set->items[i];
        if (memchr(lit->text, '\n', lit->len)) continue;
        int k = 0;
        while (k < f->count && !(f->len[k] == lit->len && memcmp(f->text[k], lit->text, lit->len) == 0)) k++;
        if (k == f->count) {
            if (k == SEARCH_MAX) {
                PyErr_SetString(PyExc_ValueError, "at most 256 distinct literals in not_routine and not_dense together");
                return -1;
            }
            f->text[k] = lit->text;
            f->len[k] = lit->len;
            f->tags[k] = 0;
            f->count++;
        }
        f->tags[k] |= tag;
    }
    return 0;
}

/* The names of the search's versions this CPU runs, the one in use first. */
static PyObject *searches(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args)) {
    search_version versions[4];
    int count = search_versions(versions);
    PyObject *names = PyList_New(0);
    for (int pass = 0; names != NULL && pass < 2; pass++)
        for (int i = 0; i < count; i++) {
            if ((versions[i].find == cfg.find) != (pass == 0)) continue;
            PyObject *name = PyUnicode_FromString(versions[i].name);
            if (name == NULL || PyList_Append(names, name) < 0) Py_CLEAR(names);
            Py_XDECREF(name);
            if (names == NULL) break;
        }
    PyObject *tuple = names ? PyList_AsTuple(names) : NULL;
    Py_XDECREF(names);
    return tuple;
}

/* Use the named version of the search (the tests compare them); not while blocks are scanned. */
static PyObject *use_search(PyObject *Py_UNUSED(self), PyObject *arg) {
    const char *wanted = PyUnicode_AsUTF8(arg);
    if (wanted == NULL) return NULL;
    search_version versions[4];
    int count = search_versions(versions);
    for (int i = 0; i < count; i++)
        if (strcmp(versions[i].name, wanted) == 0) {
            cfg.find = versions[i].find;
            Py_RETURN_NONE;
        }
    PyErr_Format(PyExc_ValueError, "no search version %R on this CPU", arg);
    return NULL;
}

static PyObject *configure(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args), PyObject *kwargs) {
    static char *names[] = {"debug",          "not_routine",  "not_dense",   "interesting",  "levels",
                            "request_head",   "request_id",   "request_opening", "counts",   "arrivals",
                            "max_line",       "years",        NULL};
    PyObject *debug, *not_routine, *not_dense, *interesting, *levels, *request_head, *request_id, *request_opening;
    PyObject *counts, *arrivals;
    Py_ssize_t max_line;
    int first_year, end_year;
    PyObject *empty = PyTuple_New(0);
    if (empty == NULL) return NULL;
    int ok = PyArg_ParseTupleAndKeywords(empty, kwargs, "$OOOOOSSSOOn(ii)", names, &debug, &not_routine, &not_dense,
                                         &interesting, &levels, &request_head, &request_id, &request_opening, &counts,
                                         &arrivals, &max_line, &first_year, &end_year);
    Py_DECREF(empty);
    if (!ok) return NULL;
    if (cfg.ready) Py_RETURN_NONE; /* once per process: the catalog does not change, and threads may be reading */
    if (!PyTuple_Check(levels) || PyTuple_GET_SIZE(levels) != LEVELS || !PyTuple_Check(counts) ||
        PyTuple_GET_SIZE(counts) != 4 || !PyTuple_Check(arrivals) || PyTuple_GET_SIZE(arrivals) > MAX_ARRIVALS) {
        PyErr_SetString(PyExc_ValueError, "levels: 3 markers, counts: 4 parts, arrivals: at most 16");
        return NULL;
    }
    literal *parts[] = {&cfg.model_open, &cfg.model_close, &cfg.tokens_close, &cfg.seconds_close};
    if (copy_set(debug, &cfg.debug) < 0 || copy_set(not_routine, &cfg.not_routine) < 0 ||
        copy_set(not_dense, &cfg.not_dense) < 0 || copy_set(interesting, &cfg.interesting) < 0 ||
        copy_literal(request_head, &cfg.request_head) < 0 || copy_literal(request_id, &cfg.request_id) < 0 ||
        copy_literal(request_opening, &cfg.request_opening) < 0)
        return NULL;
    cfg.flagged.count = 0; /* a configure that failed before may have flagged some */
    if (flag(&cfg.not_routine, NOT_ROUTINE_TAG) < 0 ||
        flag(&cfg.not_dense, NOT_DENSE_TAG) < 0)
        return NULL;
    search_version versions[4];
    search_versions(versions);
    cfg.find = versions[0].find;
    for (int i = 0; i < LEVELS; i++)
        if (copy_literal(PyTuple_GET_ITEM(levels, i), &cfg.level_marker[i]) < 0) return NULL;
    for (int i = 0; i < 4; i++)
        if (copy_literal(PyTuple_GET_ITEM(counts, i), parts[i]) < 0) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(arrivals); i++) {
        PyObject *pair = PyTuple_GET_ITEM(arrivals, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_ValueError, "an arrival is (head, opening)");
            return NULL;
        }
        if (copy_literal(PyTuple_GET_ITEM(pair, 0), &cfg.arrivals[i].head) < 0 ||
            copy_literal(PyTuple_GET_ITEM(pair, 1), &cfg.arrivals[i].opening) < 0)
            return NULL;
    }
    cfg.n_arrivals = (int)PyTuple_GET_SIZE(arrivals);
    cfg.max_line = max_line;
    cfg.first_year = first_year;
    cfg.end_year = end_year;
    cfg.ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Set the catalog's texts the scanner tests (once per process)."},
    {"is_sorted", is_sorted, METH_O, "Whether a column of integers is in order (each value at most the next)."},
    {"time_span", time_span, METH_VARARGS, "time_span(column, null) -> (least, greatest) of the other values, or None."},
    {"count_before", count_before, METH_VARARGS,
     "count_before(sources, lines, source, line) -> how many rows are of source and before line."},
    {"prefix_sums", prefix_sums, METH_O, "prefix_sums(column) -> int64 bytes: [i] the sum of the first i values."},
    {"falls", falls, METH_VARARGS,
     "falls(lines, times, more_lines, more_times, more_than) -> [(line, before, time)] where the merged times fall."},
    {"shifted", shifted, METH_VARARGS, "shifted(numbers, by) -> the uint32 numbers with by added, as bytes."},
    {"searches", searches, METH_NOARGS, "The versions of the literal search this CPU runs, the one in use first."},
    {"use_search", use_search, METH_O, "Use the named version of the literal search (for tests)."},
    {"scan_block", scan_block, METH_VARARGS,
     "scan_block(data, prev_timed, next_timed) -> the block's first and last lines, its columns as bytes, "
     "its kept lines, its line count, whether a line holds the DEBUG marker, and the levels its other "
     "lines show; None when the bytes are not UTF-8 (mend them and scan again)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_scanner",
    .m_doc = "The native block scanner.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__scanner(void) {
#ifdef __GLIBC__
    /* Blocks are 8 MiB bytes objects made and freed on worker threads: glibc would raise its mmap
     * threshold past them after the first free and keep them on its heaps, and a scan would hold
     * about twice the memory it uses. Fixed, they go back to the system when freed. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    return PyModule_Create(&module);
}
