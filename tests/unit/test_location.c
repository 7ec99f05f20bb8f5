/*
 * Unit tests of the location matcher: exact, longest prefix, ^~, regex
 * order, caseless regexes, duplicates and regex errors; the prefix lookup
 * is checked against a brute-force search on random sets.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sws_http_location_match.h"

static sws_pool_t              *pool;
static sws_http_loc_matcher_t  *m;
static const char              *err;

static void
setup(void)
{
    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);
    m = sws_http_loc_matcher_create(pool);
    ck_assert_ptr_nonnull(m);
    err = NULL;
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
}

static sws_int_t
add(sws_http_loc_kind_t kind, const char *pattern, const char *data)
{
    sws_str_t  s;

    s.len = strlen(pattern);
    s.data = (u_char *) pattern;
    err = NULL;
    return sws_http_loc_matcher_add(m, kind, &s, (void *) data, &err);
}

/* The data (a name) of the location for uri, copied to an exact-size block
 * so that the sanitizers catch reads past the end; "" for no match. */
static const char *
find(const char *uri)
{
    size_t       n = strlen(uri);
    u_char      *p = malloc(n ? n : 1);
    const char  *d;

    memcpy(p, uri, n);
    d = sws_http_loc_matcher_find(m, p, n);
    free(p);
    return d ? d : "";
}

#define ck_find(uri, expect) \
    ck_assert_msg(strcmp(find(uri), expect) == 0, "%s -> \"%s\", expected \"%s\"", \
                  uri, find(uri), expect)

START_TEST(exact_beats_prefix)
{
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "prefix /a"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_EXACT, "/a", "exact /a"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_EXACT, "/", "exact /"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "^/a", "regex"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    ck_find("/a", "exact /a");
    ck_find("/", "exact /");
    ck_find("/ab", "regex");
    ck_find("/b", "");
    ck_find("", "");
    ck_find("/A", "");
}
END_TEST

/* The halves nested locations use: static (exact or longest prefix, with
 * its kind) and regex (the first match, with its regex), each alone. */
START_TEST(static_and_regex_halves)
{
    sws_http_loc_kind_t  kind = SWS_LOC_REGEX;
    const sws_regex_t   *re = NULL;
    const char          *d;

    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "prefix /a"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX_NOREGEX, "/n", "noregex /n"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_EXACT, "/e", "exact /e"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "x$", "regex x"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    d = sws_http_loc_matcher_static(m, (const u_char *) "/a/x", 4, &kind);
    ck_assert_str_eq(d, "prefix /a");
    ck_assert_int_eq(kind, SWS_LOC_PREFIX);
    d = sws_http_loc_matcher_static(m, (const u_char *) "/nx", 3, &kind);
    ck_assert_str_eq(d, "noregex /n");
    ck_assert_int_eq(kind, SWS_LOC_PREFIX_NOREGEX);
    d = sws_http_loc_matcher_static(m, (const u_char *) "/e", 2, &kind);
    ck_assert_str_eq(d, "exact /e");
    ck_assert_int_eq(kind, SWS_LOC_EXACT);
    ck_assert_ptr_null(sws_http_loc_matcher_static(m, (const u_char *) "/zx", 3, &kind));

    d = sws_http_loc_matcher_regex(m, (const u_char *) "/a/x", 4, &re);
    ck_assert_str_eq(d, "regex x");
    ck_assert_ptr_nonnull(re);
    re = NULL;
    ck_assert_ptr_null(sws_http_loc_matcher_regex(m, (const u_char *) "/a/y", 4, &re));
    ck_assert_ptr_null(re);

    /* the whole match still gives nginx's answer for each */
    ck_find("/a/x", "regex x");
    ck_find("/nx", "noregex /n");
    ck_find("/a/y", "prefix /a");
}
END_TEST

START_TEST(longest_prefix)
{
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/", "/"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a/b", "/a/b"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "/a"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a/b/c", "/a/b/c"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/ab", "/ab"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a/ba", "/a/ba"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a/c", "/a/c"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    ck_find("/", "/");
    ck_find("/x", "/");
    ck_find("/a", "/a");
    ck_find("/a/", "/a");
    ck_find("/a/b", "/a/b");
    ck_find("/a/bb", "/a/b");
    ck_find("/a/ba", "/a/ba");
    ck_find("/a/baz", "/a/ba");
    ck_find("/a/b/x", "/a/b");
    ck_find("/a/b/c", "/a/b/c");
    ck_find("/a/b/c/d", "/a/b/c");
    ck_find("/a/bc", "/a/b");
    ck_find("/abc", "/ab");
    ck_find("/a/c/../b", "/a/c");
    ck_find("/a/d", "/a");
    ck_find("/b", "/");
    ck_find("", "");
    ck_find("x", "");
}
END_TEST

START_TEST(noregex_stops_regex)
{
    ck_assert_int_eq(add(SWS_LOC_PREFIX_NOREGEX, "/static/", "static"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/static/deep/", "deep"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/", "root"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "\\.css$", "css"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    ck_find("/static/a.css", "static");
    ck_find("/other/a.css", "css");
    ck_find("/other/a.js", "root");
    /* only the longest prefix's ^~ counts */
    ck_find("/static/deep/a.css", "css");
    ck_find("/static/deep/a.js", "deep");
}
END_TEST

START_TEST(regex_order)
{
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/img/", "prefix"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "a", "first"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "ab", "second"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "\\.png$", "png"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "\\.png$", "png again"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX, "^/(x)(y)(z)(w)/", "captures"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    ck_find("/ab", "first");
    ck_find("/img/x.png", "png");
    ck_find("/img/a.png", "first");
    ck_find("/img/x.gif", "prefix");
    ck_find("/xyzw/q", "captures");
    ck_find("/q", "");
}
END_TEST

START_TEST(regex_caseless)
{
    ck_assert_int_eq(add(SWS_LOC_REGEX, "\\.JPG$", "cased"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_REGEX_CASELESS, "\\.(gif|PNG)$", "caseless"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    ck_find("/x.JPG", "cased");
    ck_find("/x.jpg", "");
    ck_find("/x.png", "caseless");
    ck_find("/x.GiF", "caseless");
    ck_find("/x.PNG", "caseless");
}
END_TEST

START_TEST(regex_on_binary_uri)
{
    static const u_char  uri[] = { '/', 'a', 0, 'b' };

    ck_assert_int_eq(add(SWS_LOC_REGEX, "^/a\\x00b$", "nul"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);
    ck_assert_str_eq(sws_http_loc_matcher_find(m, uri, 4), "nul");
    ck_assert_ptr_null(sws_http_loc_matcher_find(m, uri, 3));
}
END_TEST

START_TEST(no_match)
{
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);
    ck_find("/", "");

    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "a"), SWS_OK);
    /* not finalised again yet: nothing matches */
    ck_find("/a", "");
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);
    ck_find("/a", "a");
    ck_find("/b", "");
    ck_find("/", "");
}
END_TEST

START_TEST(empty_prefix)
{
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "", "empty"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "a"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);
    ck_find("", "empty");
    ck_find("/", "empty");
    ck_find("/ab", "a");
}
END_TEST

START_TEST(duplicates)
{
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "1"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_EXACT, "/a", "2"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX_NOREGEX, "/b", "3"), SWS_OK);

    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a", "x"), SWS_ERROR);
    ck_assert_str_eq(err, "duplicate location \"/a\"");
    ck_assert_int_eq(add(SWS_LOC_PREFIX_NOREGEX, "/a", "x"), SWS_ERROR);
    ck_assert_str_eq(err, "duplicate location \"/a\"");
    ck_assert_int_eq(add(SWS_LOC_EXACT, "/a", "x"), SWS_ERROR);
    ck_assert_str_eq(err, "duplicate location \"/a\"");
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/b", "x"), SWS_ERROR);
    ck_assert_str_eq(err, "duplicate location \"/b\"");

    /* near misses are not duplicates */
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/a/", "4"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_PREFIX, "/A", "5"), SWS_OK);
    ck_assert_int_eq(add(SWS_LOC_EXACT, "/b", "6"), SWS_OK);

    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);
    ck_find("/a", "2");
    ck_find("/ax", "1");
    ck_find("/a/x", "4");
    ck_find("/b", "6");
    ck_find("/bx", "3");
}
END_TEST

START_TEST(bad_regex)
{
    ck_assert_int_eq(add(SWS_LOC_REGEX, "^/(a", "x"), SWS_ERROR);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "missing closing parenthesis") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "\"^/(a\"") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "offset 4") != NULL, "%s", err);

    ck_assert_int_eq(add(SWS_LOC_REGEX_CASELESS, "a[", "x"), SWS_ERROR);
    ck_assert_msg(strstr(err, "offset") != NULL, "%s", err);

    ck_assert_int_eq(add(SWS_LOC_REGEX, "*a", "x"), SWS_ERROR);
    ck_assert_msg(strstr(err, "offset 0") != NULL, "%s", err);

    /* the matcher is still usable */
    ck_assert_int_eq(add(SWS_LOC_REGEX, "^/ok$", "ok"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);
    ck_find("/ok", "ok");
    ck_find("/a", "");
}
END_TEST

/* Random prefix sets over a tiny alphabet, against brute force. */
/* Random prefixes of up to maxlen bytes over "/ab" (maxlen <= 23), uris of
 * up to urilen - 1 bytes: the longest prefix of each is found. */
static void
check_random_prefixes(int maxlen, int urilen, unsigned seed)
{
    enum { NPAT = 300, NURI = 3000 };
    static char  pats[NPAT][24];
    static const char  alpha[] = "/ab";
    char         uri[32];
    int          npat = 0, i, j, len, best, round;

    for (round = 0; round < 20; round++) {
        teardown();                 /* a matcher of the round's own */
        setup();
        npat = 0;
        for (i = 0; i < NPAT; i++) {
            len = rand_r(&seed) % (maxlen + 1);
            for (j = 0; j < len; j++) {
                pats[npat][j] = alpha[rand_r(&seed) % 3];
            }
            pats[npat][len] = '\0';
            for (j = 0; j < npat && strcmp(pats[j], pats[npat]) != 0; j++) { /* void */ }
            if (j < npat) {
                ck_assert_int_eq(add(SWS_LOC_PREFIX, pats[npat], pats[npat]), SWS_ERROR);
                continue;
            }
            ck_assert_int_eq(add(rand_r(&seed) % 2 ? SWS_LOC_PREFIX : SWS_LOC_PREFIX_NOREGEX,
                                 pats[npat], pats[npat]), SWS_OK);
            npat++;
            if (npat > round * 15 + 1) {
                break;
            }
        }
        ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

        for (i = 0; i < NURI; i++) {
            len = rand_r(&seed) % urilen;
            for (j = 0; j < len; j++) {
                uri[j] = alpha[rand_r(&seed) % 3];
            }
            uri[len] = '\0';

            best = -1;
            for (j = 0; j < npat; j++) {
                size_t pl = strlen(pats[j]);
                if (pl <= (size_t) len && memcmp(pats[j], uri, pl) == 0
                    && (best < 0 || pl > strlen(pats[best])))
                {
                    best = j;
                }
            }
            ck_find(uri, best < 0 ? "" : pats[best]);
        }
    }
}

START_TEST(random_prefixes)
{
    check_random_prefixes(7, 10, 12345);
    /* past a word: names that share their first 8 bytes and more */
    check_random_prefixes(20, 24, 777);
}
END_TEST

/* Exact names of 0 to 20 bytes over a small alphabet (long shared starts,
 * so that the ordering looks past the first word, sws_swar_cmp's second
 * load): every uri finds the exact name it equals, or none. */
START_TEST(random_exact)
{
    enum { NPAT = 200, MAXLEN = 20, NURI = 3000 };
    static char  pats[NPAT][MAXLEN + 1];
    static const char  alpha[] = "/ab";
    char         uri[MAXLEN + 1];
    int          npat = 0, i, j, len;
    unsigned     seed = 4242;

    for (i = 0; i < NPAT; i++) {
        len = rand_r(&seed) % (MAXLEN + 1);
        for (j = 0; j < len; j++) {
            pats[npat][j] = alpha[rand_r(&seed) % 3];
        }
        pats[npat][len] = '\0';
        for (j = 0; j < npat && strcmp(pats[j], pats[npat]) != 0; j++) { /* void */ }
        if (j < npat) {
            continue;
        }
        ck_assert_int_eq(add(SWS_LOC_EXACT, pats[npat], pats[npat]), SWS_OK);
        npat++;
    }
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    for (i = 0; i < npat; i++) {
        ck_find(pats[i], pats[i]);
    }
    for (i = 0; i < NURI; i++) {
        len = rand_r(&seed) % (MAXLEN + 1);
        for (j = 0; j < len; j++) {
            uri[j] = alpha[rand_r(&seed) % 3];
        }
        uri[len] = '\0';
        for (j = 0; j < npat && strcmp(pats[j], uri) != 0; j++) { /* void */ }
        ck_find(uri, j < npat ? pats[j] : "");
    }
}
END_TEST

START_TEST(many_locations)
{
    enum { N = 5000 };
    char   *names, *p, uri[64];
    int     i;

    names = sws_palloc(pool, N * 16);
    for (i = 0; i < N; i++) {
        p = names + i * 16;
        snprintf(p, 16, "/d%d/", i);
        ck_assert_int_eq(add(i % 7 ? SWS_LOC_PREFIX : SWS_LOC_EXACT, p, p), SWS_OK);
    }
    ck_assert_int_eq(add(SWS_LOC_REGEX, "\\.php$", "php"), SWS_OK);
    ck_assert_int_eq(sws_http_loc_matcher_finalize(m), SWS_OK);

    for (i = 0; i < N; i++) {
        p = names + i * 16;
        ck_find(p, p);
        snprintf(uri, sizeof(uri), "%sx/y", p);
        ck_find(uri, i % 7 ? p : "");
        snprintf(uri, sizeof(uri), "%sx.php", p);
        ck_find(uri, "php");
    }
    ck_find("/d", "");
    ck_find("/d5000/", "");
}
END_TEST

static Suite *
location_suite(void)
{
    Suite  *s = suite_create("location");
    TCase  *tc = tcase_create("match");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, exact_beats_prefix);
    tcase_add_test(tc, static_and_regex_halves);
    tcase_add_test(tc, longest_prefix);
    tcase_add_test(tc, noregex_stops_regex);
    tcase_add_test(tc, regex_order);
    tcase_add_test(tc, regex_caseless);
    tcase_add_test(tc, regex_on_binary_uri);
    tcase_add_test(tc, no_match);
    tcase_add_test(tc, empty_prefix);
    tcase_add_test(tc, duplicates);
    tcase_add_test(tc, bad_regex);
    tcase_add_test(tc, random_prefixes);
    tcase_add_test(tc, random_exact);
    tcase_add_test(tc, many_locations);
    suite_add_tcase(s, tc);

    return s;
}


int
main(void)
{
    SRunner  *sr;
    int       failed;

    sr = srunner_create(location_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    return failed ? 1 : 0;
}
