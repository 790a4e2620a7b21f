/* Many literals found in one pass over a block: each literal is given a window of three of its
 * bytes, picked rare in a sample of the block, and a bucket of up to eight; a pass of table
 * lookups on each byte's two halves (16 or 32 bytes at a time where the CPU has the instructions)
 * gives the places where some bucket's windows may stand, and only there are its literals compared.
 * This is the shape of the "Teddy" search of Hyperscan and Rust's regex crate, written for the
 * scanner: plain C, no Python, so a test program can check every version against the plain one.
 *
 * Every version gives the same list: every occurrence of every literal whose bytes lie in the block
 * and whose window starts in the range searched, in the order of the windows.
 */
#ifndef OMLX_LOGSCAN_SEARCH_H
#define OMLX_LOGSCAN_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SEARCH_X86 1
#include <immintrin.h>
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#define SEARCH_NEON 1
#include <arm_neon.h>
#endif

#define SEARCH_MAX 256
#define WINDOW 3
#define BUCKETS 8

typedef struct {
    int count;
    const char *text[SEARCH_MAX];
    ptrdiff_t len[SEARCH_MAX];
    unsigned char tags[SEARCH_MAX]; /* the caller's marks for each literal, given back with each find */
    ptrdiff_t offset[SEARCH_MAX];   /* where its window stands in it */
    /* by window byte j and half (low, high): the buckets whose windows take a byte of that half */
    unsigned char masks[WINDOW][2][16];
    unsigned char any[WINDOW]; /* by window byte j: the buckets that take any byte there (short literals) */
    short first[BUCKETS + 1], order[SEARCH_MAX]; /* the literals of bucket b: order[first[b]..first[b + 1]) */
} fingerprints;

/* One occurrence: where its window stands, where the literal ends, and the literal's tags. */
typedef struct {
    ptrdiff_t at, end;
    unsigned char tags;
} found;

typedef struct {
    found *items;
    size_t len, cap;
    int failed;
} found_list;

/* What a search also notes of the stretch [base, to) it reads, for the caller that splits it into
 * lines: where its newlines are (bit p - base of ``newlines``, given zeroed, (to - base) / 8 + 8
 * bytes), and whether a byte is not ASCII (then its text needs a UTF-8 check). */
typedef struct {
    ptrdiff_t base;
    uint8_t *newlines;
    int wide;
} marks;

/* How often the pair of bytes (a, b) was seen in the sample: a hashed count, high only when some
 * pair is common, which is all the window choice needs. */
#define PAIR_SLOTS (1 << 14)
static size_t pair_slot(unsigned char a, unsigned char b) { return (((size_t)a << 6) ^ b) & (PAIR_SLOTS - 1); }

/* The byte values a bucket's masks take at each window byte: each byte whose two halves it takes. */
typedef struct {
    uint16_t low[WINDOW], high[WINDOW]; /* bit h: the half h is taken */
} halves;

static void take_window(halves *h, const char *window, ptrdiff_t len) {
    for (int j = 0; j < WINDOW; j++) {
        if (j < len) {
            h->low[j] |= (uint16_t)(1u << ((unsigned char)window[j] & 15));
            h->high[j] |= (uint16_t)(1u << ((unsigned char)window[j] >> 4));
        } else {
            h->low[j] = h->high[j] = 0xFFFF;
        }
    }
}

/* How many places of the sample a bucket's masks would stop at, reckoning its window bytes as
 * independent: the blur of sharing a bucket (its windows' halves mix) is what this weighs. */
static double stops(const halves *h, const size_t counts[256], double places) {
    double share = places;
    for (int j = 0; j < WINDOW; j++) {
        size_t taken = 0;
        for (int c = 0; c < 256; c++)
            if (h->low[j] >> (c & 15) & 1 && h->high[j] >> (c >> 4) & 1) taken += counts[c];
        share *= (double)taken / places;
    }
    return share;
}

/* The literals' windows and buckets for text like ``sample``. Literals are given as ``text``,
 * ``len`` and ``tags`` (none holds a newline: a caller that finds lines leaves those out). */
static int plan_fingerprints(fingerprints *f, const unsigned char *sample, ptrdiff_t sample_len) {
    uint16_t *pairs = calloc(PAIR_SLOTS, sizeof *pairs);
    if (pairs == NULL) return -1;
    size_t counts[256] = {0};
    for (ptrdiff_t i = 0; i < sample_len; i++) counts[sample[i]]++;
    for (ptrdiff_t i = 0; i + 1 < sample_len; i++) {
        uint16_t *slot = &pairs[pair_slot(sample[i], sample[i + 1])];
        if (*slot < UINT16_MAX) (*slot)++;
    }
    /* Each literal's window: where its rarer pair is rarest, then where its bytes are rarest. */
    double seen[SEARCH_MAX];
    for (int k = 0; k < f->count; k++) {
        const unsigned char *t = (const unsigned char *)f->text[k];
        size_t best_pair = SIZE_MAX, best_bytes = SIZE_MAX;
        f->offset[k] = 0;
        for (ptrdiff_t o = 0; o + WINDOW <= f->len[k]; o++) {
            size_t a = pairs[pair_slot(t[o], t[o + 1])], b = pairs[pair_slot(t[o + 1], t[o + 2])];
            size_t pair = a < b ? a : b, bytes = counts[t[o]] + counts[t[o + 1]] + counts[t[o + 2]];
            if (pair < best_pair || (pair == best_pair && bytes < best_bytes)) {
                best_pair = pair;
                best_bytes = bytes;
                f->offset[k] = o;
            }
        }
        halves alone = {{0}, {0}};
        take_window(&alone, f->text[k] + f->offset[k], f->len[k]);
        seen[k] = stops(&alone, counts, (double)(sample_len + 1));
        if (f->len[k] >= WINDOW && (double)best_pair < seen[k]) seen[k] = (double)best_pair;
    }
    free(pairs);
    /* Buckets: the commonest literals first, each into the bucket where it adds the fewest stops
     * (an empty one adds its own). */
    short by_seen[SEARCH_MAX];
    for (int k = 0; k < f->count; k++) {
        int j = k;
        for (; j > 0 && seen[by_seen[j - 1]] < seen[k]; j--) by_seen[j] = by_seen[j - 1];
        by_seen[j] = (short)k;
    }
    halves held[BUCKETS];
    double cost[BUCKETS];
    int bucket[SEARCH_MAX], used = 0;
    for (int i = 0; i < f->count; i++) {
        int k = by_seen[i], best = -1;
        double best_added = 0;
        halves best_halves;
        for (int b = 0; b < BUCKETS && b <= used; b++) {
            halves h = {{0}, {0}};
            if (b < used) h = held[b];
            take_window(&h, f->text[k] + f->offset[k], f->len[k]);
            double added = b < used ? stops(&h, counts, (double)(sample_len + 1)) - cost[b] : seen[k];
            if (best < 0 || added < best_added) {
                best = b;
                best_added = added;
                best_halves = h;
            }
        }
        if (best == used) {
            used++;
            cost[best] = 0;
        }
        held[best] = best_halves;
        cost[best] += best_added;
        bucket[k] = best;
    }
    memset(f->masks, 0, sizeof f->masks);
    memset(f->any, 0, sizeof f->any);
    int next = 0;
    for (int b = 0; b < BUCKETS; b++) {
        f->first[b] = (short)next;
        for (int k = 0; k < f->count; k++) {
            if (bucket[k] != b) continue;
            f->order[next++] = (short)k;
            unsigned char bit = (unsigned char)(1u << b);
            for (int j = 0; j < WINDOW; j++) {
                if (j < f->len[k]) {
                    unsigned char c = (unsigned char)f->text[k][f->offset[k] + j];
                    f->masks[j][0][c & 15] |= bit;
                    f->masks[j][1][c >> 4] |= bit;
                } else {
                    f->any[j] |= bit;
                    for (int h = 0; h < 16; h++) f->masks[j][0][h] |= bit, f->masks[j][1][h] |= bit;
                }
            }
        }
    }
    f->first[BUCKETS] = (short)next;
    return 0;
}

static void add_found(found_list *out, ptrdiff_t at, ptrdiff_t end, unsigned char tags) {
    if (out->failed) return;
    if (out->len == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 1024;
        found *grown = realloc(out->items, cap * sizeof *grown);
        if (grown == NULL) {
            out->failed = 1;
            return;
        }
        out->items = grown;
        out->cap = cap;
    }
    out->items[out->len++] = (found){at, end, tags};
}

/* Whether the ``len`` bytes at a and b are the same: eight at a time, no call for the short
 * literals that most finds are. */
static int same(const char *a, const char *b, ptrdiff_t len) {
    ptrdiff_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return 0;
    }
    for (; i < len; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* The literals of the buckets ``hit`` whose windows may stand at ``p``, compared in full. */
static void compare_at(const fingerprints *f, const char *s, ptrdiff_t n, ptrdiff_t p, unsigned hit,
                       found_list *out) {
    for (; hit; hit &= hit - 1) {
        int b = __builtin_ctz(hit);
        for (int i = f->first[b]; i < f->first[b + 1]; i++) {
            int k = f->order[i];
            ptrdiff_t start = p - f->offset[k];
            if (start >= 0 && start + f->len[k] <= n && same(s + start, f->text[k], f->len[k]))
                add_found(out, p, start + f->len[k], f->tags[k]);
        }
    }
}

/* The windows at [from, to), a byte at a time: the reference, and every version's tail. */
static void find_plain(const fingerprints *f, const char *s, ptrdiff_t n, ptrdiff_t from, ptrdiff_t to,
                       found_list *out, marks *m) {
    const unsigned char *u = (const unsigned char *)s;
    for (ptrdiff_t p = from; p < to; p++) {
        if (u[p] == '\n') m->newlines[(p - m->base) >> 3] |= (uint8_t)(1u << ((p - m->base) & 7));
        m->wide |= u[p] >> 7;
        unsigned hit = 0xFF;
        for (int j = 0; j < WINDOW && hit; j++)
            hit &= p + j < n ? (unsigned)(f->masks[j][0][u[p + j] & 15] & f->masks[j][1][u[p + j] >> 4]) : f->any[j];
        if (hit) compare_at(f, s, n, p, hit, out);
    }
}

/* After a vector of windows at p: the places its ``hits`` mark, then where the vector loop ends. */
static void take_hits(const fingerprints *f, const char *s, ptrdiff_t n, ptrdiff_t p, const unsigned char *hits,
                      int width, found_list *out) {
    for (int i = 0; i < width; i++)
        if (hits[i]) compare_at(f, s, n, p + i, hits[i], out);
}

#ifdef SEARCH_X86
__attribute__((target("ssse3"))) static void find_ssse3(const fingerprints *f, const char *s, ptrdiff_t n,
                                                         ptrdiff_t from, ptrdiff_t to, found_list *out, marks *m) {
    __m128i low[WINDOW], high[WINDOW], nibble = _mm_set1_epi8(15), newline = _mm_set1_epi8('\n'), any = _mm_setzero_si128();
    for (int j = 0; j < WINDOW; j++) {
        low[j] = _mm_loadu_si128((const __m128i *)f->masks[j][0]);
        high[j] = _mm_loadu_si128((const __m128i *)f->masks[j][1]);
    }
    ptrdiff_t p = from;
    for (; p + 16 <= to && p + 16 + WINDOW - 1 <= n; p += 16) {
        __m128i hit = _mm_set1_epi8(-1), first = _mm_loadu_si128((const __m128i *)(s + p));
        uint16_t lines = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(first, newline));
        memcpy(m->newlines + ((p - m->base) >> 3), &lines, 2); /* p - base: a multiple of 16 */
        any = _mm_or_si128(any, first);
        for (int j = 0; j < WINDOW; j++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + p + j));
            __m128i a = _mm_shuffle_epi8(low[j], _mm_and_si128(v, nibble));
            __m128i b = _mm_shuffle_epi8(high[j], _mm_and_si128(_mm_srli_epi16(v, 4), nibble));
            hit = _mm_and_si128(hit, _mm_and_si128(a, b));
        }
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(hit, _mm_setzero_si128())) != 0xFFFF) {
            unsigned char hits[16];
            _mm_storeu_si128((__m128i *)hits, hit);
            take_hits(f, s, n, p, hits, 16, out);
        }
    }
    m->wide |= _mm_movemask_epi8(any) != 0;
    find_plain(f, s, n, p, to, out, m);
}

__attribute__((target("avx2"))) static void find_avx2(const fingerprints *f, const char *s, ptrdiff_t n,
                                                       ptrdiff_t from, ptrdiff_t to, found_list *out, marks *m) {
    __m256i low[WINDOW], high[WINDOW], nibble = _mm256_set1_epi8(15), newline = _mm256_set1_epi8('\n');
    __m256i any = _mm256_setzero_si256();
    for (int j = 0; j < WINDOW; j++) { /* the lookups work in each 16-byte half: the tables twice */
        low[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)f->masks[j][0]));
        high[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)f->masks[j][1]));
    }
    ptrdiff_t p = from;
    for (; p + 32 <= to && p + 32 + WINDOW - 1 <= n; p += 32) {
        __m256i hit = _mm256_set1_epi8(-1), first = _mm256_loadu_si256((const __m256i *)(s + p));
        uint32_t lines = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(first, newline));
        memcpy(m->newlines + ((p - m->base) >> 3), &lines, 4); /* p - base: a multiple of 32 */
        any = _mm256_or_si256(any, first);
        for (int j = 0; j < WINDOW; j++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(s + p + j));
            __m256i a = _mm256_shuffle_epi8(low[j], _mm256_and_si256(v, nibble));
            __m256i b = _mm256_shuffle_epi8(high[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
            hit = _mm256_and_si256(hit, _mm256_and_si256(a, b));
        }
        uint32_t marked = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hit, _mm256_setzero_si256()));
        if (marked) {
            unsigned char hits[32];
            _mm256_storeu_si256((__m256i *)hits, hit);
            for (; marked; marked &= marked - 1) {
                int i = __builtin_ctz(marked);
                compare_at(f, s, n, p + i, hits[i], out);
            }
        }
    }
    m->wide |= _mm256_movemask_epi8(any) != 0;
    find_plain(f, s, n, p, to, out, m);
}
#endif

#ifdef SEARCH_NEON
static void find_neon(const fingerprints *f, const char *s, ptrdiff_t n, ptrdiff_t from, ptrdiff_t to,
                      found_list *out, marks *m) {
    static const uint8_t weights[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t low[WINDOW], high[WINDOW], nibble = vdupq_n_u8(15), newline = vdupq_n_u8('\n'), any = vdupq_n_u8(0);
    uint8x16_t weight = vld1q_u8(weights);
    for (int j = 0; j < WINDOW; j++) {
        low[j] = vld1q_u8(f->masks[j][0]);
        high[j] = vld1q_u8(f->masks[j][1]);
    }
    ptrdiff_t p = from;
    for (; p + 16 <= to && p + 16 + WINDOW - 1 <= n; p += 16) {
        uint8x16_t hit = vdupq_n_u8(0xFF), first = vld1q_u8((const uint8_t *)s + p);
        uint8x16_t lines = vandq_u8(vceqq_u8(first, newline), weight); /* a bit a byte, as a movemask gives */
        uint8_t halves[2] = {vaddv_u8(vget_low_u8(lines)), vaddv_u8(vget_high_u8(lines))};
        memcpy(m->newlines + ((p - m->base) >> 3), halves, 2); /* p - base: a multiple of 16 */
        any = vorrq_u8(any, first);
        for (int j = 0; j < WINDOW; j++) {
            uint8x16_t v = vld1q_u8((const uint8_t *)s + p + j);
            hit = vandq_u8(hit, vandq_u8(vqtbl1q_u8(low[j], vandq_u8(v, nibble)), vqtbl1q_u8(high[j], vshrq_n_u8(v, 4))));
        }
        if (vmaxvq_u8(hit)) {
            unsigned char hits[16];
            vst1q_u8(hits, hit);
            take_hits(f, s, n, p, hits, 16, out);
        }
    }
    m->wide |= vmaxvq_u8(any) >= 0x80;
    find_plain(f, s, n, p, to, out, m);
}
#endif

/* A version of the search: finds at [from, to) into ``out``, that stretch's marks into ``m``
 * (whose base is ``from``). */
typedef void (*finder)(const fingerprints *, const char *, ptrdiff_t, ptrdiff_t, ptrdiff_t, found_list *, marks *);

typedef struct {
    const char *name;
    finder find;
} search_version;

/* The versions this build and CPU can run, the fastest first; "plain" is always last. */
static int search_versions(search_version *out) {
    int count = 0;
#ifdef SEARCH_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) out[count++] = (search_version){"avx2", find_avx2};
    if (__builtin_cpu_supports("ssse3")) out[count++] = (search_version){"ssse3", find_ssse3};
#endif
#ifdef SEARCH_NEON
    out[count++] = (search_version){"neon", find_neon};
#endif
    out[count++] = (search_version){"plain", find_plain};
    return count;
}

#endif
