"""The cache module's RFC 9111 rules, each against a real origin
(cacheorigin.py) that sends exactly the fields the test chose: freshness
(max-age, s-maxage, Expires, Age), what is never stored, no-cache, HEAD,
POST invalidating, Vary, conditional and Range requests from the entry,
revalidation, and the directives that steer it. $upstream_cache_status
comes from the access log."""
import email.utils
import time

import pytest

import swsharness as h
from cacheorigin import corigin, get, start  # noqa: F401

DATE = "Sun, 06 Nov 1994 08:49:37 GMT"


def cc(value, *more):
    return [("Cache-Control", value)] + list(more)


def twice(srv, path, **kw):
    return get(srv, path, **kw)[1], get(srv, path, **kw)[1]


# ---- freshness

def test_max_age_and_expiry(sws, corigin):
    o = corigin()
    # 2 s: ages are whole seconds, so with 1 s a second boundary between
    # the two requests could make the second stale
    o.set("/c/ma", body=b"one", headers=cc("max-age=2"))
    srv = start(sws, o)
    assert twice(srv, "/c/ma") == ("MISS", "HIT")
    o.set("/c/ma", body=b"two", headers=cc("max-age=60"))

    def expired():
        r, st = get(srv, "/c/ma")
        return st == "EXPIRED" and r.body == b"two"
    assert h.wait_for(expired, timeout=5)
    r, st = get(srv, "/c/ma")
    assert st == "HIT" and r.body == b"two"


def test_s_maxage_wins_over_max_age(sws, corigin):
    o = corigin()
    o.set("/c/s", headers=cc("max-age=0, s-maxage=60"))
    srv = start(sws, o)
    assert twice(srv, "/c/s") == ("MISS", "HIT")


def test_two_max_ages_that_differ_are_stale(sws, corigin):
    # RFC 9111 4.2.1: the first occurrence, or stale; issue 26 asks for
    # stale (the safe way), in one field line or across two
    o = corigin()
    o.set("/c/m1", headers=cc("max-age=0, max-age=60"))
    o.set("/c/m2", headers=cc("max-age=60, max-age=0"))
    o.set("/c/m3", headers=cc("max-age=60", ("Cache-Control", "max-age=0")))
    o.set("/c/m4", headers=cc("max-age=60", ("Cache-Control", "max-age=60")))
    srv = start(sws, o)
    assert twice(srv, "/c/m1") == ("MISS", "MISS")
    assert twice(srv, "/c/m2") == ("MISS", "MISS")
    assert twice(srv, "/c/m3") == ("MISS", "MISS")
    assert twice(srv, "/c/m4") == ("MISS", "HIT")          # the same twice: once


def test_expires(sws, corigin):
    o = corigin()
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 3600))
    o.set("/c/xf", headers=[("Expires", future)])
    o.set("/c/xp", headers=[("Expires", DATE)])
    o.set("/c/xbad", headers=[("Expires", "0")])          # invalid: already expired
    srv = start(sws, o)
    assert twice(srv, "/c/xf") == ("MISS", "HIT")
    assert twice(srv, "/c/xp") == ("MISS", "MISS")
    assert twice(srv, "/c/xbad") == ("MISS", "MISS")
    # max-age wins over Expires
    o.set("/c/xm", headers=cc("max-age=60", ("Expires", DATE)))
    assert twice(srv, "/c/xm") == ("MISS", "HIT")


def test_age_counts_against_freshness_and_is_sent(sws, corigin):
    o = corigin()
    o.set("/c/age", headers=cc("max-age=600", ("Age", "100")))
    o.set("/c/old", headers=cc("max-age=60", ("Age", "100")))
    srv = start(sws, o)
    get(srv, "/c/age")
    r, st = get(srv, "/c/age")
    assert st == "HIT" and 100 <= int(r.header("Age")) < 110
    assert r.headers_all("Age") == [r.header("Age")]       # one, ours
    assert twice(srv, "/c/old") == ("MISS", "MISS")        # stale on arrival


def http_date(offset):
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + offset))


def test_date_gives_the_apparent_age(sws, corigin):
    # RFC 9111 4.2.3: a response whose Date is 100 s old is 100 s old, Age
    # or not; the miss gets our Date (as nginx's), the hits the server's
    # (test_cache_rfc_round2.py)
    o = corigin()
    o.set("/c/d1", headers=cc("max-age=600", ("Date", http_date(-100))))
    o.set("/c/d2", headers=cc("max-age=60", ("Date", http_date(-100))))
    srv = start(sws, o)
    r, _ = get(srv, "/c/d1")
    assert abs(email.utils.parsedate_to_datetime(r.header("Date")).timestamp()
               - time.time()) < 10                         # ours, not the server's
    r, st = get(srv, "/c/d1")
    assert st == "HIT" and 100 <= int(r.header("Age")) < 110
    assert twice(srv, "/c/d2") == ("MISS", "MISS")        # stale on arrival


def test_expires_counts_from_the_servers_date(sws, corigin):
    # 4.2.1: the lifetime is Expires minus Date, whatever our clock says:
    # a server two hours ahead that gives one hour is already expired
    o = corigin()
    o.set("/c/ex", headers=[("Date", http_date(7200)), ("Expires", http_date(3600))])
    o.set("/c/ok", headers=[("Date", http_date(7200)), ("Expires", http_date(7260))])
    srv = start(sws, o)
    assert twice(srv, "/c/ex") == ("MISS", "MISS")
    assert twice(srv, "/c/ok") == ("MISS", "HIT")


def test_proxy_cache_valid_without_explicit_freshness(sws, corigin):
    o = corigin()
    o.set("/c/v200", headers=[])
    o.set("/c/v404", headers=[], status=404)
    o.set("/c/v500", headers=[], status=500)
    srv = start(sws, o, loc="proxy_cache_valid 200 1m; proxy_cache_valid 404 10s;")
    assert twice(srv, "/c/v200") == ("MISS", "HIT")
    r, st = get(srv, "/c/v404")
    assert r.status == 404 and get(srv, "/c/v404")[1] == "HIT"
    assert twice(srv, "/c/v500") == ("MISS", "MISS")
    # nothing explicit and no proxy_cache_valid: not stored
    srv2 = start(sws, o)
    assert twice(srv2, "/c/v200") == ("MISS", "MISS")
    srv3 = start(sws, o, loc="proxy_cache_valid any 1m;")
    assert twice(srv3, "/c/v500") == ("MISS", "HIT")
    # explicit freshness wins over proxy_cache_valid
    o.set("/c/vx", headers=cc("max-age=0"))
    assert twice(srv3, "/c/vx") == ("MISS", "MISS")


# ---- never stored

@pytest.mark.parametrize("value", ["no-store, max-age=60", "max-age=60, private",
                                   "private=\"\", max-age=60"])
def test_no_store_and_private_are_never_stored(sws, corigin, value):
    o = corigin()
    o.set("/c/n", headers=cc(value))
    srv = start(sws, o)
    assert twice(srv, "/c/n") == ("MISS", "MISS")
    assert o.count("/c/n") == 2


def test_must_understand(sws, corigin):
    # RFC 9111 5.2.2.3: with a status code the cache understands, stored in
    # spite of no-store; with another one, never stored
    o = corigin()
    o.set("/c/mu", headers=cc("max-age=60, no-store, must-understand"))
    o.set("/c/mu202", status=202, headers=cc("max-age=60, must-understand"))
    o.set("/c/202", status=202, headers=cc("max-age=60"))
    srv = start(sws, o)
    assert twice(srv, "/c/mu") == ("MISS", "HIT")
    assert twice(srv, "/c/mu202") == ("MISS", "MISS")
    assert twice(srv, "/c/202") == ("MISS", "HIT")


def test_a_partial_response_is_never_stored(sws, corigin):
    # a 206 served from the cache to a plain GET would look like the whole
    o = corigin()
    o.set("/c/part", status=206, body=b"abc",
          headers=cc("max-age=60", ("Content-Range", "bytes 0-2/10")))
    srv = start(sws, o)
    assert twice(srv, "/c/part") == ("MISS", "MISS")
    assert o.count("/c/part") == 2


@pytest.mark.parametrize("value,stored", [
    ("max-age=60", True), ('max-age="60"', True), ("max-age=60 , public", True),
    ("max-age=12abc", False), ("max-age=", False), ("max-age=-1", False),
    ("max-age=1e3", False), ("max-age=99999999999999999999999", True)])
def test_delta_seconds_are_digits_only(sws, corigin, value, stored):
    # an invalid max-age makes the response stale (RFC 9111 1.2.2, 4.2.1);
    # one too large for the clock saturates
    o = corigin()
    o.set("/c/d", headers=cc(value))
    srv = start(sws, o)
    assert twice(srv, "/c/d") == ("MISS", "HIT" if stored else "MISS")


def test_request_no_store_stores_nothing(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    assert get(srv, "/c/rns", headers=["Cache-Control: no-store"])[1] == "MISS"
    assert twice(srv, "/c/rns") == ("MISS", "HIT")
    assert o.count("/c/rns") == 2


def test_only_if_cached(sws, corigin):
    # RFC 9111 5.2.1.7: a miss is 504 without asking the origin; a hit is
    # served; a stale entry is not. max-age=2: ages are whole seconds, so
    # with 1 a second boundary between the miss and the hit made it stale
    o = corigin()
    o.set("/c/oic", body=b"one", headers=cc("max-age=2"))
    srv = start(sws, o)
    oic = ["Cache-Control: only-if-cached"]
    r, st = get(srv, "/c/oic", headers=oic)
    assert r.status == 504 and o.count("/c/oic") == 0
    assert get(srv, "/c/oic")[1] == "MISS"
    r, st = get(srv, "/c/oic", headers=oic)
    assert (r.status, st, r.body) == (200, "HIT", b"one")
    assert h.wait_for(lambda: get(srv, "/c/oic", headers=oic)[0].status == 504, timeout=5)
    assert o.count("/c/oic") == 1
    assert get(srv, "/c/oic")[1] == "EXPIRED"         # the lock was let go


def test_set_cookie_is_not_stored_unless_ignored(sws, corigin):
    o = corigin()
    o.set("/c/ck", headers=cc("max-age=60", ("Set-Cookie", "a=1")))
    srv = start(sws, o)
    assert twice(srv, "/c/ck") == ("MISS", "MISS")
    srv2 = start(sws, o, loc="proxy_ignore_headers Set-Cookie;")
    assert twice(srv2, "/c/ck") == ("MISS", "HIT")


@pytest.mark.parametrize("value,stored", [
    ("max-age=60", False), ("max-age=60, public", True), ("s-maxage=60", True),
    ("max-age=60, must-revalidate", True)])
def test_authorization_needs_the_response_to_allow_it(sws, corigin, value, stored):
    o = corigin()
    o.set("/c/auth", headers=cc(value))
    srv = start(sws, o)
    a = ["Authorization: Basic dTpw"]
    get(srv, "/c/auth", headers=a)
    assert get(srv, "/c/auth", headers=a)[1] == ("HIT" if stored else "MISS")


def test_ignore_cache_control_uses_proxy_cache_valid(sws, corigin):
    o = corigin()
    o.set("/c/icc", headers=cc("no-store"))
    srv = start(sws, o, loc="proxy_ignore_headers Cache-Control; proxy_cache_valid 1m;")
    assert twice(srv, "/c/icc") == ("MISS", "HIT")


def test_vary_star_never_matches(sws, corigin):
    o = corigin()
    o.set("/c/vs", headers=cc("max-age=60", ("Vary", "*")))
    srv = start(sws, o)
    assert twice(srv, "/c/vs") == ("MISS", "MISS")


# ---- no-cache, revalidation

def test_no_cache_is_stored_and_revalidated_on_every_use(sws, corigin):
    o = corigin()
    o.set("/c/nc", body=b"kept", headers=cc("no-cache", ("ETag", '"nc1"')))
    srv = start(sws, o)
    assert get(srv, "/c/nc")[1] == "MISS"
    for _ in range(2):
        r, st = get(srv, "/c/nc")
        assert st == "REVALIDATED" and r.status == 200 and r.body == b"kept"
        assert o.last().header("If-None-Match") == '"nc1"'
    assert o.count("/c/nc") == 3


def test_revalidate_with_etag_and_last_modified(sws, corigin):
    o = corigin()
    o.set("/c/rv", body=b"body", headers=cc("max-age=1", ("ETag", '"r1"'),
                                            ("Last-Modified", DATE)))
    srv = start(sws, o, loc="proxy_cache_revalidate on;")
    get(srv, "/c/rv")
    o.set("/c/rv", body=b"body", headers=cc("max-age=60", ("ETag", '"r1"'),
                                            ("Last-Modified", DATE), ("X-New", "yes")))

    def revalidated():
        return get(srv, "/c/rv")[1] == "REVALIDATED"
    assert h.wait_for(revalidated, timeout=5)
    q = o.last()
    assert q.header("If-None-Match") == '"r1"' and q.header("If-Modified-Since") == DATE
    # the 304 refreshed the entry: fresh again, with the 304's new field
    r, st = get(srv, "/c/rv")
    assert st == "HIT" and r.body == b"body" and r.header("X-New") == "yes"
    assert r.header("ETag") == '"r1"'
    # and so does its file: a memory-less server reads the same
    n = o.count("/c/rv")
    assert get(srv, "/c/rv")[1] == "HIT" and o.count("/c/rv") == n


def test_revalidation_answered_200_replaces_the_entry(sws, corigin):
    o = corigin()
    o.set("/c/rc", body=b"old", headers=cc("max-age=1", ("ETag", '"a"')))
    srv = start(sws, o, loc="proxy_cache_revalidate on;")
    get(srv, "/c/rc")
    o.set("/c/rc", body=b"new", headers=cc("max-age=60", ("ETag", '"b"')))

    def changed():
        r, st = get(srv, "/c/rc")
        return st == "EXPIRED" and r.body == b"new"
    assert h.wait_for(changed, timeout=5)
    r, st = get(srv, "/c/rc")
    assert st == "HIT" and r.body == b"new" and r.header("ETag") == '"b"'


# ---- what the client asks

def test_head_is_answered_from_the_get_entry(sws, corigin):
    o = corigin()
    o.set("/c/hd", body=b"x" * 1234, headers=cc("max-age=60"))
    srv = start(sws, o)
    get(srv, "/c/hd")
    r, st = get(srv, "/c/hd", method="HEAD")
    assert st == "HIT" and r.status == 200 and r.body == b""
    assert r.header("Content-Length") == "1234"
    assert o.count("/c/hd") == 1


def test_a_head_miss_is_asked_as_get_and_stored(sws, corigin):
    # proxy_cache_convert_head on (nginx's default): the server is asked
    # with GET, the client gets the head alone, the next GET is a hit
    o = corigin()
    o.set("/c/hg", body=b"x" * 5000, headers=cc("max-age=60"))
    srv = start(sws, o)
    r, st = get(srv, "/c/hg", method="HEAD")
    assert (r.status, st, r.body) == (200, "MISS", b"")
    assert r.header("Content-Length") == "5000"
    assert o.last().method == "GET"
    r, st = get(srv, "/c/hg")
    assert (st, r.body) == ("HIT", b"x" * 5000) and o.count("/c/hg") == 1
    assert get(srv, "/c/hg", method="HEAD")[1] == "HIT"


def test_a_head_miss_stores_nothing_with_convert_head_off(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_convert_head off;")
    assert get(srv, "/c/hm", method="HEAD")[1] == "MISS"
    assert o.last().method == "HEAD"
    assert get(srv, "/c/hm")[1] == "MISS"
    assert get(srv, "/c/hm")[1] == "HIT"


def test_a_conditional_miss_answered_304_is_not_stored(sws, corigin):
    # the client's If-None-Match goes to the server (RFC 9111 4.3.1), whose
    # 304 reaches the client without a body, and is not stored; a client's
    # If-Modified-Since does not: the whole response is stored
    o = corigin()
    o.set("/c/cm", body=b"y" * 3000, headers=cc("max-age=60", ("ETag", '"cm"'),
                                                ("Last-Modified", DATE)))
    srv = start(sws, o)
    r, st = get(srv, "/c/cm", headers=['If-None-Match: "cm"'])
    assert (r.status, st) == (304, "MISS") and o.count("/c/cm") == 1
    r, st = get(srv, "/c/cm", headers=["If-Modified-Since: " + DATE])
    assert (r.status, st) == (304, "MISS") and o.count("/c/cm") == 2
    assert o.last().header("if-modified-since") is None
    r, st = get(srv, "/c/cm")
    assert (st, r.body) == ("HIT", b"y" * 3000) and o.count("/c/cm") == 2


def test_conditional_requests_are_answered_from_the_entry(sws, corigin):
    o = corigin()
    o.set("/c/cd", body=b"cond", headers=cc("max-age=60", ("ETag", '"e1"'),
                                            ("Last-Modified", DATE)))
    srv = start(sws, o)
    get(srv, "/c/cd")
    r, st = get(srv, "/c/cd", headers=['If-None-Match: "e1"'])
    assert r.status == 304 and st == "HIT" and r.body == b""
    r, st = get(srv, "/c/cd", headers=["If-Modified-Since: " + DATE])
    assert r.status == 304 and st == "HIT"
    r, st = get(srv, "/c/cd", headers=['If-None-Match: "other"'])
    assert r.status == 200 and r.body == b"cond"
    r, st = get(srv, "/c/cd", headers=["Range: bytes=1-2"])
    assert r.status == 206 and r.body == b"on" and st == "HIT"
    assert o.count("/c/cd") == 1


def test_post_goes_to_the_origin_and_invalidates(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    assert twice(srv, "/c/pi") == ("MISS", "HIT")
    r, st = get(srv, "/c/pi", method="POST", body=b"x=1")
    assert r.status == 200 and st == "-"
    assert get(srv, "/c/pi")[1] == "MISS"
    assert o.count("/c/pi") == 3
    # DELETE too
    get(srv, "/c/pi", method="DELETE")
    assert get(srv, "/c/pi")[1] == "MISS"


def test_proxy_cache_methods_post(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_methods GET POST;")
    assert get(srv, "/c/pm", method="POST", body=b"a")[1] == "MISS"
    assert get(srv, "/c/pm", method="POST", body=b"a")[1] == "HIT"


def test_vary_keeps_one_variant_per_value(sws, corigin):
    o = corigin()
    o.set("/c/va", body=b"v", headers=cc("max-age=60", ("Vary", "Accept-Encoding")))
    srv = start(sws, o)
    gz, br = ["Accept-Encoding: gzip"], ["Accept-Encoding: br"]
    assert get(srv, "/c/va", headers=gz)[1] == "MISS"
    assert get(srv, "/c/va", headers=br)[1] == "MISS"
    assert get(srv, "/c/va", headers=gz)[1] == "HIT"
    assert get(srv, "/c/va", headers=br)[1] == "HIT"
    assert get(srv, "/c/va")[1] == "MISS"                  # none is a value too
    assert get(srv, "/c/va")[1] == "HIT"
    assert o.count("/c/va") == 3
    # the response stops varying: the variants go
    o.set("/c/va", body=b"plain", headers=cc("max-age=60"))
    get(srv, "/c/va", method="POST", body=b"")            # invalidates all
    assert get(srv, "/c/va", headers=gz)[1] == "MISS"
    r, st = get(srv, "/c/va", headers=br)
    assert st == "HIT" and r.body == b"plain"


# ---- the directives that steer it

def test_min_uses(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_min_uses 3;")
    assert [get(srv, "/c/mu")[1] for _ in range(4)] == ["MISS", "MISS", "MISS", "HIT"]
    assert o.count("/c/mu") == 3


def test_bypass_fetches_and_stores(sws, corigin):
    o = corigin()
    o.set("/c/bp", body=b"one", headers=cc("max-age=60"))
    srv = start(sws, o, loc="proxy_cache_bypass $http_x_bypass $arg_nocache;")
    get(srv, "/c/bp")
    o.set("/c/bp", body=b"two", headers=cc("max-age=60"))
    r, st = get(srv, "/c/bp", headers=["X-Bypass: 1"])
    assert st == "BYPASS" and r.body == b"two"
    r, st = get(srv, "/c/bp", headers=["X-Bypass: 0"])     # "0" does not count
    assert st == "HIT" and r.body == b"two"


def test_no_cache_directive_does_not_store(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_no_cache $arg_skip;")
    assert twice(srv, "/c/nk?skip=1") == ("MISS", "MISS")
    assert twice(srv, "/c/nk") == ("MISS", "HIT")


def test_custom_key(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_key $uri;")
    assert get(srv, "/c/k?a=1")[1] == "MISS"
    assert get(srv, "/c/k?a=2")[1] == "HIT"                # the query is not in it


def test_http2_clients_are_served_from_the_cache(sws, corigin):
    o = corigin()
    o.set("/c/h2", body=b"y" * 100000, headers=cc("max-age=60"))
    o.set("/c/h2s", body=b"small", headers=cc("max-age=60"))
    srv = start(sws, o, "mem_size=1m", server="http2 on;")
    for path, body in (("/c/h2", b"y" * 100000), ("/c/h2s", b"small")):
        assert get(srv, path, prior_knowledge=True)[1] == "MISS"
        r, st = get(srv, path, prior_knowledge=True)
        assert st == "HIT" and r.http_version == 3 and r.body == body, r    # HTTP/2
        assert r.header("age") is not None
        assert o.count(path) == 1
