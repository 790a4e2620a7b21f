/* Checks every version of the scanner's literal search (src/omlx_logscan/_search.h) against the
 * plain one: the same finds, in the same order, and the same marks (newlines, bytes past ASCII),
 * on the given file cut into stretches of every size given, and on random text of the literals'
 * own bytes. Built and run by tests/parsing/
 * test_search.py; also cross-built for arm64 and run under qemu where .ci/run can.
 *
 *     search_check FILE LITERAL...    exit 0: all versions agree; prints each version's find count
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/omlx_logscan/_search.h"

static int same_finds(const found_list *a, const found_list *b) {
    if (a->len != b->len) return 0;
    for (size_t i = 0; i < a->len; i++)
        if (a->items[i].at != b->items[i].at || a->items[i].end != b->items[i].end ||
            a->items[i].tags != b->items[i].tags)
            return 0;
    return 1;
}

/* One version over ``text`` in stretches of ``stretch`` bytes: its finds, and each stretch's marks
 * laid end to end (a newline bit a byte of the text; whether each stretch holds a byte past ASCII). */
static void search_all(finder find, const fingerprints *f, const char *text, ptrdiff_t n, ptrdiff_t stretch,
                       found_list *out, uint8_t *lines, uint8_t *wide) {
    static uint8_t bits[(1 << 22) / 8 + 8];
    for (ptrdiff_t from = 0, k = 0; from < n; from += stretch, k++) {
        ptrdiff_t to = from + stretch < n ? from + stretch : n;
        memset(bits, 0, (size_t)(to - from) / 8 + 8);
        marks m = {from, bits, 0};
        find(f, text, n, from, to, out, &m);
        for (ptrdiff_t p = from; p < to; p++) lines[p] = bits[(p - from) >> 3] >> ((p - from) & 7) & 1;
        wide[k] = (uint8_t)m.wide;
    }
}

/* Every version over ``text`` in stretches of ``stretch`` bytes: 0 when all agree with the plain one. */
static int check(fingerprints *f, const char *text, ptrdiff_t n, ptrdiff_t stretch, const char *what) {
    static uint8_t want_lines[1 << 22], got_lines[1 << 22], want_wide[1 << 22], got_wide[1 << 22];
    search_version versions[4];
    int count = search_versions(versions), bad = 0;
    ptrdiff_t stretches = (n + stretch - 1) / stretch;
    if (plan_fingerprints(f, (const unsigned char *)text, n < 65536 ? n : 65536) < 0) return 1;
    found_list want = {0};
    search_all(find_plain, f, text, n, stretch, &want, want_lines, want_wide);
    for (ptrdiff_t p = 0; p < n; p++)
        if (want_lines[p] != (text[p] == '\n')) {
            fprintf(stderr, "%s: the plain search marks byte %td wrongly\n", what, p);
            bad = 1;
        }
    for (int v = 0; v < count; v++) {
        found_list got = {0};
        search_all(versions[v].find, f, text, n, stretch, &got, got_lines, got_wide);
        if (!same_finds(&want, &got) || memcmp(want_lines, got_lines, (size_t)n) != 0 ||
            memcmp(want_wide, got_wide, (size_t)stretches) != 0) {
            fprintf(stderr, "%s, stretches of %td: %s found %zu, plain %zu (or marked otherwise)\n", what, stretch,
                    versions[v].name, got.len, want.len);
            bad = 1;
        }
        free(got.items);
    }
    free(want.items);
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: search_check FILE LITERAL...\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (in == NULL) {
        perror(argv[1]);
        return 2;
    }
    static char text[1 << 22];
    ptrdiff_t n = (ptrdiff_t)fread(text, 1, sizeof text, in);
    fclose(in);
    static fingerprints f;
    f.count = 0;
    for (int i = 2; i < argc && f.count < SEARCH_MAX; i++, f.count++) {
        f.text[f.count] = argv[i];
        f.len[f.count] = (ptrdiff_t)strlen(argv[i]);
        f.tags[f.count] = (unsigned char)(1u << (i % 8));
    }
    int bad = 0;
    static const ptrdiff_t stretches[] = {1, 7, 16, 33, 4096, 1 << 22};
    for (size_t s = 0; s < sizeof stretches / sizeof *stretches; s++) bad |= check(&f, text, n, stretches[s], argv[1]);
    /* random text of the literals' bytes, where finds and near-finds are dense */
    static char noise[1 << 16];
    srand(1);
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof noise; i++) {
            const char *lit = f.text[rand() % f.count];
            int pick = rand() % 16;
            noise[i] = pick > 1 ? lit[rand() % (int)strlen(lit)] : pick ? '\n' : (char)(rand() % 256);
        }
        ptrdiff_t len = rand() % (ptrdiff_t)sizeof noise + 1;
        bad |= check(&f, noise, len, 1 + rand() % 300, "random text");
    }
    search_version versions[4];
    int count = search_versions(versions);
    for (int v = 0; v < count; v++) {
        found_list got = {0};
        static uint8_t bits[(1 << 22) / 8 + 8];
        marks m = {0, bits, 0};
        versions[v].find(&f, text, n, 0, n, &got, &m);
        printf("%s %zu\n", versions[v].name, got.len);
        free(got.items);
    }
    return bad;
}
