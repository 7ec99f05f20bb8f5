"""Issue 26's rules at their edges, as a browser or a CDN test would probe
them through proxy_cache in front of a real origin (cacheorigin.py)."""
import time

import pytest

from cacheorigin import corigin, get, start  # noqa: F401
from test_cache_rfc_round2 import LM, cc, http_date, twice


# ---- invalidation (RFC 9111 4.4)

def test_relative_location_and_content_location_are_invalidated(sws, corigin):
    # both fields are URI-references (RFC 9110 10.2.2, 8.7), resolved
    # against the target URI
    o = corigin()
    srv = start(sws, o)
    for p in ("/c/r/x", "/c/y", "/c/r/z?q=1"):
        assert twice(srv, p) == ("MISS", "HIT")
    o.set("/c/r/form", status=201, body=b"",
          headers=[("Location", "x"), ("Content-Location", "../y")])
    assert get(srv, "/c/r/form", method="POST", body=b"x")[0].status == 201
    assert get(srv, "/c/r/x")[1] == "MISS"
    assert get(srv, "/c/y")[1] == "MISS"
    o.set("/c/r/form2", status=204, body=b"", headers=[("Location", "./z?q=1")])
    get(srv, "/c/r/form2", method="PATCH", body=b"x")
    assert get(srv, "/c/r/z?q=1")[1] == "MISS"


def test_a_redirect_answer_invalidates_its_same_origin_location(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    host = "127.0.0.1:%d" % srv.port
    for p in ("/c/a", "/c/b"):
        assert twice(srv, p) == ("MISS", "HIT")
    o.set("/c/post", status=303, body=b"", headers=[("Location", "http://%s/c/a" % host)])
    assert get(srv, "/c/post", method="POST", body=b"x")[0].status == 303
    assert get(srv, "/c/a")[1] == "MISS"
    # the same host on another port is another origin
    o.set("/c/post", status=303, body=b"",
          headers=[("Location", "http://127.0.0.1:%d/c/b" % (srv.port + 1))])
    get(srv, "/c/post", method="POST", body=b"x")
    assert get(srv, "/c/b")[1] == "HIT"


def test_an_unsafe_method_without_an_answer_invalidates_nothing(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    assert twice(srv, "/c/d") == ("MISS", "HIT")
    o.set("/c/d", drop=True)
    r, _ = get(srv, "/c/d", method="DELETE")
    assert r.status == 502
    o.set("/c/d", body=b"new")
    r, st = get(srv, "/c/d")
    assert (st, r.body) == ("HIT", b"/c/d")


def test_invalidation_removes_every_variant(sws, corigin):
    o = corigin()
    o.set("/c/v", body=b"v", headers=cc("max-age=60", ("Vary", "X-Lang")))
    srv = start(sws, o)
    for lang in ("en", "fr"):
        assert twice(srv, "/c/v", headers=["X-Lang: " + lang]) == ("MISS", "HIT")
    o.set("/c/v", status=204, body=b"")
    get(srv, "/c/v", method="PUT", body=b"x")
    o.set("/c/v", body=b"v", headers=cc("max-age=60", ("Vary", "X-Lang")))
    for lang in ("en", "fr"):
        assert get(srv, "/c/v", headers=["X-Lang: " + lang])[1] == "MISS"


def test_an_absolute_location_in_any_letter_case_with_a_fragment(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    assert twice(srv, "/c/q") == ("MISS", "HIT")
    o.set("/c/pp", status=201, body=b"",
          headers=[("Content-Location", "HTTP://127.0.0.1:%d/c/q#frag" % srv.port)])
    get(srv, "/c/pp", method="POST", body=b"x")
    assert get(srv, "/c/q")[1] == "MISS"


# ---- conditional requests

def test_if_none_match_not_matching_is_answered_whole(sws, corigin):
    o = corigin()
    o.set("/c/n", body=b"cond", headers=cc("max-age=60", ("ETag", '"e1"'),
                                           ("Last-Modified", LM)))
    srv = start(sws, o)
    get(srv, "/c/n")
    for inm in ('"e2"', '"e2", W/"e3"', 'W/"e11"', '"E1"'):
        r, st = get(srv, "/c/n", headers=["If-None-Match: " + inm])
        assert (r.status, st, r.body) == (200, "HIT", b"cond"), inm
    # If-None-Match present: If-Modified-Since is not looked at (RFC 9110 13.1.3)
    r, st = get(srv, "/c/n", headers=['If-None-Match: "e2"',
                                      "If-Modified-Since: " + http_date(0)])
    assert (r.status, st, r.body) == (200, "HIT", b"cond")
    r, st = get(srv, "/c/n", headers=['If-None-Match: "e1"',
                                      "If-Modified-Since: Sat, 01 Jan 1994 00:00:00 GMT"])
    assert (r.status, st) == (304, "HIT")


# ---- Age

def test_an_age_too_large_is_stale_and_a_lifetime_too_large_saturates(sws, corigin):
    o = corigin()
    o.set("/c/a1", headers=cc("max-age=60", ("Age", "99999999999999999999")))
    o.set("/c/a2", headers=cc("max-age=99999999999999999999"))
    srv = start(sws, o)
    assert twice(srv, "/c/a1") == ("MISS", "MISS")
    assert twice(srv, "/c/a2") == ("MISS", "HIT")


def test_age_on_a_stale_answer_and_after_a_revalidation(sws, corigin):
    o = corigin()
    o.set("/c/s", body=b"s", headers=cc("max-age=1, stale-if-error=60", ("ETag", '"s"')))
    srv = start(sws, o)
    get(srv, "/c/s")
    time.sleep(1.1)
    r, st = get(srv, "/c/s")
    assert st == "REVALIDATED" and r.header("Age") is not None and int(r.header("Age")) <= 1
    time.sleep(1.1)
    o.set("/c/s", status=500, body=b"err")
    r, st = get(srv, "/c/s")
    assert (r.status, st, r.body) == (200, "STALE", b"s") and int(r.header("Age")) >= 1


def test_a_quick_answer_across_a_second_boundary_took_no_second(sws, corigin):
    # RFC 9111 4.2.3's response_delay in milliseconds: 0.3 s across a
    # second boundary is not a second of age (which made max-age=1 stale
    # on arrival, not stored)
    o = corigin()
    o.set("/c/q", body=b"q", headers=cc("max-age=1"), delay=0.3)
    srv = start(sws, o)
    get(srv, "/c/warm")
    time.sleep(1.85 - time.time() % 1)         # asked at x.85, answered at x+1.15
    assert twice(srv, "/c/q") == ("MISS", "HIT")


def test_of_an_age_list_in_one_line_the_first_counts(sws, corigin):
    o = corigin()
    o.set("/c/al", headers=cc("max-age=60", ("Age", "50, 0")))
    srv = start(sws, o)
    get(srv, "/c/al")
    r, st = get(srv, "/c/al")
    assert st == "HIT" and 50 <= int(r.header("Age")) < 60


# ---- Expires

@pytest.mark.parametrize("expires", ["0", "-1", "never", ""])
def test_an_invalid_expires_is_in_the_past_and_not_heuristic(sws, corigin, expires):
    o = corigin()
    o.set("/c/x", headers=[("Expires", expires), ("Last-Modified", LM)])
    srv = start(sws, o)
    assert twice(srv, "/c/x") == ("MISS", "MISS")


@pytest.mark.parametrize("fmt", ["%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y"])
def test_expires_in_the_obsolete_date_formats(sws, corigin, fmt):
    o = corigin()
    when = time.strftime(fmt, time.gmtime(time.time() + 3600))
    o.set("/c/xo", headers=[("Expires", when)])
    srv = start(sws, o)
    assert twice(srv, "/c/xo") == ("MISS", "HIT")


def test_expires_counts_from_the_servers_date(sws, corigin):
    o = corigin()
    o.set("/c/sk", headers=[("Date", http_date(3600)), ("Expires", http_date(30))])
    srv = start(sws, o)
    assert twice(srv, "/c/sk") == ("MISS", "MISS")


# ---- Cache-Control's forms

@pytest.mark.parametrize("value,want", [
    ('max-age="60"', "HIT"),            # RFC 9111 5.2: both forms accepted
    ("MAX-AGE=60", "HIT"),              # names are case-insensitive
    ("max-age=60, s-maxage=0", "MISS"),  # s-maxage first in a shared cache
    ("s-maxage=60, max-age=0", "HIT"),
    ("max-age=60, no-cache", "REVALIDATED"),
])
def test_cache_control_forms(sws, corigin, value, want):
    o = corigin()
    o.set("/c/f", body=b"f", headers=cc(value, ("ETag", '"f"')))
    srv = start(sws, o)
    assert twice(srv, "/c/f") == ("MISS", want)


def test_no_cache_fields_of_a_304_are_not_stored(sws, corigin):
    o = corigin()
    o.set("/c/nf", body=b"one", headers=cc('max-age=1, no-cache="X-Secret"', ("ETag", '"n"')))
    srv = start(sws, o)
    get(srv, "/c/nf")
    time.sleep(1.1)
    o.set("/c/nf", body=b"one", headers=cc('max-age=60, no-cache="X-Secret"', ("ETag", '"n"'),
                                           ("X-Secret", "s")))
    r, st = get(srv, "/c/nf")
    assert st == "REVALIDATED" and r.header("X-Secret") == "s"
    r, st = get(srv, "/c/nf")
    assert st == "HIT" and r.header("X-Secret") is None


def test_private_with_one_unquoted_field(sws, corigin):
    o = corigin()
    o.set("/c/pu", body=b"p", headers=cc("max-age=60, private=X-Secret", ("X-Secret", "s")))
    srv = start(sws, o)
    get(srv, "/c/pu")
    r, st = get(srv, "/c/pu")
    assert st == "HIT" and r.header("X-Secret") is None


# ---- HEAD (RFC 9111 4.3.5)

def test_a_head_updates_an_entry_without_validators(sws, corigin):
    o = corigin()
    o.set("/c/h", body=b"one", headers=cc("max-age=1", ("X-V", "1")))
    srv = start(sws, o)
    get(srv, "/c/h")
    time.sleep(1.1)
    o.set("/c/h", body=b"one", headers=cc("max-age=60", ("X-V", "2")))
    r, st = get(srv, "/c/h", method="HEAD")
    assert r.status == 200 and o.last().method == "HEAD"
    r, st = get(srv, "/c/h")
    assert (st, r.body, r.header("X-V")) == ("HIT", b"one", "2")


def test_a_head_with_another_length_makes_the_entry_stale(sws, corigin):
    o = corigin()
    o.set("/c/hl", body=b"one", headers=cc("max-age=1", ("ETag", '"h"')))
    srv = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv, "/c/hl")
    time.sleep(1.1)
    o.set("/c/hl", body=b"longer", headers=cc("max-age=60", ("ETag", '"h"')))
    r, st = get(srv, "/c/hl", method="HEAD")
    assert r.status == 200 and o.last().method == "HEAD"
    r, st = get(srv, "/c/hl")
    assert st != "HIT" and r.body == b"longer"


# ---- 304 updates (RFC 9111 3.2)

def test_a_304_does_not_update_content_length_or_hop_by_hop_fields(sws, corigin):
    o = corigin()
    o.set("/c/u", body=b"twelve bytes", headers=cc("max-age=1", ("ETag", '"u"'),
                                                   ("X-A", "1"), ("X-B", "1")))
    srv = start(sws, o)
    get(srv, "/c/u")
    time.sleep(1.1)
    o.set("/c/u", body=b"", headers=cc("max-age=60", ("ETag", '"u"'), ("Content-Length", "0"),
                                       ("Connection", "X-A"), ("X-A", "2"), ("X-B", "2"),
                                       ("Keep-Alive", "timeout=5")))
    for want in ("REVALIDATED", "HIT"):
        r, st = get(srv, "/c/u")
        assert (st, r.body) == (want, b"twelve bytes")
        assert r.header("Content-Length") == "12"
        assert (r.header("X-A"), r.header("X-B")) == ("1", "2"), want
        assert r.header("Keep-Alive") is None


def test_a_304_replaces_a_stored_cookie_when_cookies_are_stored(sws, corigin):
    o = corigin()
    o.set("/c/ck", body=b"c", headers=cc("max-age=1", ("ETag", '"c"'), ("Set-Cookie", "a=1")))
    srv = start(sws, o, loc="proxy_ignore_headers Set-Cookie;")
    r, st = get(srv, "/c/ck")
    assert get(srv, "/c/ck")[0].header("Set-Cookie") == "a=1"
    time.sleep(1.1)
    o.set("/c/ck", body=b"c", headers=cc("max-age=60", ("ETag", '"c"'), ("Set-Cookie", "b=2")))
    for want in ("REVALIDATED", "HIT"):
        r, st = get(srv, "/c/ck")
        assert (st, r.headers_all("Set-Cookie")) == (want, ["b=2"])


def test_stored_cookies_keep_every_line(sws, corigin):
    o = corigin()
    o.set("/c/c2", body=b"c", headers=cc("max-age=60", ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")))
    srv = start(sws, o, loc="proxy_ignore_headers Set-Cookie;")
    get(srv, "/c/c2")
    r, st = get(srv, "/c/c2")
    assert st == "HIT" and r.headers_all("Set-Cookie") == ["a=1", "b=2"]


def test_a_304_field_of_several_lines_replaces_the_stored_one(sws, corigin):
    o = corigin()
    o.set("/c/ml", body=b"m", headers=cc("max-age=1", ("ETag", '"m"'), ("X-L", "1")))
    srv = start(sws, o)
    get(srv, "/c/ml")
    time.sleep(1.1)
    o.set("/c/ml", body=b"m", headers=cc("max-age=60", ("ETag", '"m"'), ("X-L", "2"), ("X-L", "3")))
    for want in ("REVALIDATED", "HIT"):
        r, st = get(srv, "/c/ml")
        assert (st, r.headers_all("X-L")) == (want, ["2", "3"])


# ---- stale

@pytest.mark.parametrize("status", [500, 502, 504])
def test_stale_if_error_on_every_server_error(sws, corigin, status):
    o = corigin()
    o.set("/c/se", body=b"old", headers=cc("max-age=1, stale-if-error=60"))
    srv = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv, "/c/se")
    time.sleep(1.1)
    o.set("/c/se", status=status, body=b"err")
    r, st = get(srv, "/c/se")
    assert (r.status, st, r.body) == (200, "STALE", b"old")


@pytest.mark.parametrize("status", [404, 403, 501, 505])
def test_stale_if_error_not_on_other_answers(sws, corigin, status):
    o = corigin()
    o.set("/c/se", body=b"old", headers=cc("max-age=1, stale-if-error=60"))
    srv = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv, "/c/se")
    time.sleep(1.1)
    o.set("/c/se", status=status, body=b"gone")
    r, st = get(srv, "/c/se")
    assert (r.status, r.body) == (status, b"gone")


def test_stale_if_error_past_its_window_and_with_must_revalidate(sws, corigin):
    o = corigin()
    o.set("/c/w1", body=b"old", headers=cc("max-age=1, stale-if-error=1"))
    o.set("/c/w2", body=b"old", headers=cc("max-age=1, stale-if-error=60, must-revalidate"))
    srv = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv, "/c/w1")
    get(srv, "/c/w2")
    time.sleep(2.2)
    o.set("/c/w1", status=503, body=b"err")
    o.set("/c/w2", status=503, body=b"err")
    for p in ("/c/w1", "/c/w2"):
        r, st = get(srv, p)
        assert (r.status, r.body) == (503, b"err"), p


def test_stale_if_error_of_the_request(sws, corigin):
    # RFC 5861 4: a request directive too, for that request alone
    o = corigin()
    o.set("/c/rs", body=b"old", headers=cc("max-age=1"))
    srv = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv, "/c/rs")
    time.sleep(1.1)
    o.set("/c/rs", status=503, body=b"err")
    r, st = get(srv, "/c/rs")
    assert (r.status, r.body) == (503, b"err")
    r, st = get(srv, "/c/rs", headers=["Cache-Control: stale-if-error=60"])
    assert (r.status, st, r.body) == (200, "STALE", b"old")
    r, st = get(srv, "/c/rs", headers=["Cache-Control: stale-if-error=0"])
    assert (r.status, r.body) == (503, b"err")


# ---- heuristic freshness: the listed status codes alone

@pytest.mark.parametrize("status", [203, 204, 300, 308, 405, 414, 501])
def test_heuristic_for_every_listed_status(sws, corigin, status):
    o = corigin()
    o.set("/c/hs", body=b"" if status == 204 else b"h", status=status,
          headers=[("Last-Modified", http_date(-1000)), ("Location", "/x")])
    srv = start(sws, o)
    assert twice(srv, "/c/hs") == ("MISS", "HIT")


@pytest.mark.parametrize("status", [201, 302, 303, 307, 403, 500, 503])
def test_no_heuristic_for_other_statuses(sws, corigin, status):
    o = corigin()
    o.set("/c/hn", body=b"h", status=status,
          headers=[("Last-Modified", http_date(-1000)), ("Location", "/x")])
    srv = start(sws, o)
    assert twice(srv, "/c/hn") == ("MISS", "MISS")


def test_no_heuristic_for_a_last_modified_in_the_future(sws, corigin):
    o = corigin()
    o.set("/c/fut", body=b"h", headers=[("Last-Modified", http_date(3600))])
    srv = start(sws, o)
    assert twice(srv, "/c/fut") == ("MISS", "MISS")


def test_heuristic_beside_public_and_must_revalidate(sws, corigin):
    o = corigin()
    o.set("/c/hp", body=b"h", headers=[("Last-Modified", http_date(-1000)),
                                       ("Cache-Control", "public, must-revalidate")])
    srv = start(sws, o)
    assert twice(srv, "/c/hp") == ("MISS", "HIT")


# ---- targeted fields

def test_targeted_hide_hides_every_listed_field(sws, corigin):
    o = corigin()
    o.set("/c/th", body=b"t", headers=[("Cache-Control", "no-store"),
                                       ("Scalws-Cache-Control", "max-age=60"),
                                       ("CDN-Cache-Control", "no-store")])
    srv = start(sws, o, loc="proxy_cache_targeted_fields Scalws-Cache-Control "
                            "CDN-Cache-Control; proxy_cache_targeted_hide on;")
    for want in ("MISS", "HIT"):
        r, st = get(srv, "/c/th")
        assert st == want
        assert r.header("Scalws-Cache-Control") is None and r.header("CDN-Cache-Control") is None
        assert r.header("Cache-Control") == "no-store"


def test_cdn_no_cache_revalidates_every_time(sws, corigin):
    o = corigin()
    o.set("/c/tn", body=b"t", headers=[("Cache-Control", "max-age=60"),
                                       ("CDN-Cache-Control", "no-cache"), ("ETag", '"t"')])
    srv = start(sws, o)
    assert twice(srv, "/c/tn") == ("MISS", "REVALIDATED")


def test_cdn_s_maxage_beside_private_cache_control(sws, corigin):
    o = corigin()
    o.set("/c/cs", body=b"c", headers=[("Cache-Control", "private"),
                                       ("CDN-Cache-Control", "s-maxage=60")])
    srv = start(sws, o)
    assert twice(srv, "/c/cs") == ("MISS", "HIT")


def test_invalidation_over_http2_by_the_authority(sws, corigin):
    # no Host: the origin is :authority's
    o = corigin()
    srv = start(sws, o, server="http2 on;")
    kw = dict(http2=True, prior_knowledge=True)
    for p in ("/c/x", "/c/y", "/c/z"):
        assert twice(srv, p, **kw) == ("MISS", "HIT")
    o.set("/c/form", status=201, body=b"",
          headers=[("Location", "http://127.0.0.1:%d/c/x" % srv.port),
                   ("Content-Location", "//127.0.0.1:%d/c/y" % srv.port)])
    assert get(srv, "/c/form", method="POST", body=b"x", **kw)[0].status == 201
    assert get(srv, "/c/x", **kw)[1] == "MISS"
    assert get(srv, "/c/y", **kw)[1] == "MISS"
    o.set("/c/form", status=201, body=b"",
          headers=[("Location", "http://127.0.0.1:%d/c/z" % (srv.port + 1))])
    get(srv, "/c/form", method="POST", body=b"x", **kw)
    assert get(srv, "/c/z", **kw)[1] == "HIT"
