"""The cache's second round of RFC 9111 rules (issue 26, "Wrong today"),
each against a real origin (cacheorigin.py) that sends exactly the fields
the test chose, and beside nginx 1.22 where nginx does the right thing."""
import email.utils
import os
import time

import pytest

import swsharness as h
from cacheorigin import corigin, get, start, statuses  # noqa: F401
from test_nginx_sites import NGINX, start_server

LM = "Sun, 06 Nov 1994 08:49:37 GMT"


def http_date(offset):
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + offset))


def cc(value, *more):
    return [("Cache-Control", value)] + list(more)


def twice(srv, path, **kw):
    return get(srv, path, **kw)[1], get(srv, path, **kw)[1]


@pytest.fixture
def side_by_side(tmp_path):
    """side_by_side(site) -> {who: port} for nginx and scalwsd, each with
    the http block's content site (@PORT@ and @DIR@ replaced)."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running = []

    def run(site):
        ports = {}
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            running.append(start_server(who, d, port, site.replace("@PORT@", str(port))
                                        .replace("@DIR@", str(d))))
            ports[who] = port
        h.make_traversable(tmp_path)
        return ports

    yield run
    for s in running:
        s.stop()


# ---- proxying: the origin's Last-Modified whatever the status

def test_origin_last_modified_passes_with_every_status(side_by_side, corigin, tmp_path):
    o = corigin()
    for st in (200, 201, 403, 404, 502):
        o.set("/c/lm%d" % st, body=b"x", status=st,
              headers=cc("max-age=60", ("Last-Modified", LM)))
    root = tmp_path / "root"
    root.mkdir()
    (root / "404.html").write_text("not here\n")
    ports = side_by_side("""
        proxy_cache_path @DIR@/cache keys_zone=c:1m;
        server {
            listen 127.0.0.1:@PORT@;
            root %s;
            location /c/ { proxy_pass http://%s; }
            location /k/ { proxy_pass http://%s/c/; proxy_cache c;
                           proxy_cache_valid any 1m; }
            location /missing/ { error_page 404 /404.html; }
        }
    """ % (root, o.addr, o.addr))
    seen = {}
    for who, port in ports.items():
        for st in (200, 201, 403, 404, 502):
            for pre in ("c", "k", "k"):        # proxied; cached: miss, then hit
                r = h.curl("http://127.0.0.1:%d/%s/lm%d" % (port, pre, st))
                assert r.status == st
                seen.setdefault((pre, st), {})[who] = r.headers_all("Last-Modified")
        # an error page the server made from a file claims no date
        r = h.curl("http://127.0.0.1:%d/missing/x" % port)
        assert r.status == 404 and r.body == b"not here\n"
        seen.setdefault(("missing", 404), {})[who] = r.headers_all("Last-Modified")
    for key, by in seen.items():
        assert by["scalwsd"] == by["nginx"], key
        assert by["scalwsd"] == ([] if key[0] == "missing" else [LM]), key


# ---- invalidation (RFC 9111 4.4)

@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "M-SEARCH"])
def test_an_unsafe_method_answered_2xx_invalidates(sws, corigin, method):
    o = corigin()
    srv = start(sws, o)
    assert twice(srv, "/c/u") == ("MISS", "HIT")
    r, _ = get(srv, "/c/u", method=method, body=b"x" if method != "DELETE" else None)
    assert r.status == 200
    assert o.count("/c/u") == 2                    # the method went to the origin
    assert twice(srv, "/c/u") == ("MISS", "HIT")


def test_safe_methods_invalidate_nothing(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    assert twice(srv, "/c/s") == ("MISS", "HIT")
    r, _ = get(srv, "/c/s", method="OPTIONS")
    assert get(srv, "/c/s")[1] == "HIT"


@pytest.mark.parametrize("status", [404, 500, 503])
def test_a_failed_unsafe_method_invalidates_nothing(sws, corigin, status):
    o = corigin()
    srv = start(sws, o)
    assert twice(srv, "/c/f") == ("MISS", "HIT")
    o.set("/c/f", body=b"no", status=status, headers=[])
    r, _ = get(srv, "/c/f", method="POST", body=b"x")
    assert r.status == status
    r, st = get(srv, "/c/f")
    assert st == "HIT" and r.body == b"/c/f"


def test_location_and_content_location_are_invalidated(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    host = "127.0.0.1:%d" % srv.port
    for p in ("/c/x", "/c/y", "/c/z", "/c/w"):
        assert twice(srv, p) == ("MISS", "HIT")
    # (method, status, Location, Content-Location) of an answer, and what
    # each entry is afterwards
    for method, status, loc, cloc, after in [
            ("POST", 201, "/c/x", "http://%s/c/y" % host,
             dict(x="MISS", y="MISS", z="HIT", w="HIT")),
            # another origin's URI (another host, another scheme): not ours
            ("PUT", 303, "http://elsewhere.example/c/z", "https://%s/c/w" % host,
             dict(z="HIT", w="HIT")),
            # after an error, the answer's Location is not invalidated either
            ("DELETE", 500, "/c/z", "/c/w", dict(z="HIT", w="HIT"))]:
        o.set("/c/form", status=status, body=b"",
              headers=[("Location", loc), ("Content-Location", cloc)])
        r, _ = get(srv, "/c/form", method=method, body=b"x" if method != "DELETE" else None)
        assert r.status == status
        for name, st in after.items():
            assert get(srv, "/c/" + name)[1] == st, (method, name)


# ---- conditional requests

@pytest.mark.parametrize("etag,inm", [
    ('"e1"', '"zz", "e1"'),                     # a list
    ('"e1"', 'W/"e1"'),                         # weak comparison (RFC 9110 13.1.2)
    ('W/"e1"', '"e1"'),
    ('W/"e1"', '"a",W/"e1"'),
    ('"e1"', '*'),
])
def test_if_none_match_forms_answered_304_from_a_fresh_entry(sws, corigin, etag, inm):
    o = corigin()
    o.set("/c/inm", body=b"cond", headers=cc("max-age=60", ("ETag", etag)))
    srv = start(sws, o, path_params="mem_size=1m")
    get(srv, "/c/inm")
    for _ in range(2):                           # from the file, then from memory
        r, st = get(srv, "/c/inm", headers=["If-None-Match: " + inm])
        assert (r.status, st, r.body) == (304, "HIT", b"")
        assert r.header("ETag") == etag
    assert o.count("/c/inm") == 1


def test_if_modified_since_newer_than_the_entry_answers_304(sws, corigin):
    o = corigin()
    o.set("/c/ims", body=b"cond", headers=cc("max-age=60", ("Last-Modified", LM)))
    srv = start(sws, o)
    get(srv, "/c/ims")
    for ims in (LM, "Mon, 07 Nov 1994 08:49:37 GMT", "Sat, 01 Jan 2000 00:00:00 GMT"):
        r, st = get(srv, "/c/ims", headers=["If-Modified-Since: " + ims])
        assert (r.status, st) == (304, "HIT"), ims
    r, st = get(srv, "/c/ims", headers=["If-Modified-Since: Sat, 05 Nov 1994 08:49:37 GMT"])
    assert (r.status, st, r.body) == (200, "HIT", b"cond")


def test_if_modified_since_without_last_modified_uses_the_date(sws, corigin):
    # RFC 9111 4.3.2: no Last-Modified stored: the stored response's Date
    o = corigin()
    o.set("/c/imd", body=b"cond", headers=cc("max-age=600", ("Date", http_date(-100))))
    srv = start(sws, o)
    get(srv, "/c/imd")
    r, st = get(srv, "/c/imd", headers=["If-Modified-Since: " + http_date(-50)])
    assert (r.status, st) == (304, "HIT")
    assert r.header("Last-Modified") is None
    r, st = get(srv, "/c/imd", headers=["If-Modified-Since: " + http_date(-200)])
    assert (r.status, st, r.body) == (200, "HIT", b"cond")
    r, st = get(srv, "/c/imd", headers=["If-Modified-Since: not a date"])
    assert (r.status, st, r.body) == (200, "HIT", b"cond")


def test_if_none_match_on_a_miss_goes_to_the_origin(sws, corigin):
    o = corigin()
    o.set("/c/fw", body=b"y" * 3000, headers=cc("max-age=60", ("ETag", '"fw"')))
    srv = start(sws, o)
    r, st = get(srv, "/c/fw", headers=['If-None-Match: "fw", "old"'])
    assert (r.status, st, r.body) == (304, "MISS", b"")
    assert o.last().header("if-none-match") == '"fw", "old"'
    assert r.header("ETag") == '"fw"'
    # the 304 was not stored: the next request is a miss that stores the 200
    r, st = get(srv, "/c/fw", headers=['If-None-Match: "old"'])
    assert (r.status, st, r.body) == (200, "MISS", b"y" * 3000)
    r, st = get(srv, "/c/fw")
    assert (r.status, st, r.body) == (200, "HIT", b"y" * 3000)


# ---- Age and Date

def test_age_counts_the_time_the_origin_took(sws, corigin):
    # RFC 9111 4.2.3: corrected_age_value = age_value + response_delay
    o = corigin()
    o.set("/c/slow", body=b"s", headers=cc("max-age=60"), delay=1.2)
    o.set("/c/slowage", body=b"s", headers=cc("max-age=60", ("Age", "10")), delay=1.2)
    srv = start(sws, o)
    assert get(srv, "/c/slow")[1] == "MISS"
    r, st = get(srv, "/c/slow")
    assert st == "HIT" and int(r.header("Age")) >= 1
    get(srv, "/c/slowage")
    r, st = get(srv, "/c/slowage")
    assert st == "HIT" and int(r.header("Age")) >= 11


def test_age_on_every_answer_from_the_cache(sws, corigin):
    o = corigin()
    o.set("/c/a304", body=b"a", headers=cc("max-age=60", ("ETag", '"a"'), ("Age", "5")))
    srv = start(sws, o)
    get(srv, "/c/a304")
    for hdrs in ([], ['If-None-Match: "a"'], ["Range: bytes=0-0"]):
        r, st = get(srv, "/c/a304", headers=hdrs)
        assert st == "HIT" and r.status in (200, 304, 206)
        assert r.headers_all("Age") and int(r.header("Age")) >= 5, hdrs


def test_of_several_age_lines_the_first_counts(sws, corigin):
    o = corigin()
    o.set("/c/ages", headers=cc("max-age=60", ("Age", "50"), ("Age", "0")))
    o.set("/c/ages2", headers=cc("max-age=60", ("Age", "5"), ("Age", "100")))
    srv = start(sws, o)
    get(srv, "/c/ages")
    r, st = get(srv, "/c/ages")
    assert st == "HIT" and 50 <= int(r.header("Age")) < 60
    assert twice(srv, "/c/ages2") == ("MISS", "HIT")


@pytest.mark.parametrize("age", ["abc", "-5", "1.5", "10x"])
def test_an_age_not_digits_makes_the_response_stale(sws, corigin, age):
    o = corigin()
    o.set("/c/badage", headers=cc("max-age=60", ("Age", age)))
    srv = start(sws, o)
    assert twice(srv, "/c/badage") == ("MISS", "MISS")


def date_of(r):
    return email.utils.parsedate_to_datetime(r.header("Date")).timestamp()


@pytest.mark.parametrize("http2", [False, True])
def test_a_hit_keeps_the_stored_date(sws, corigin, http2):
    o = corigin()
    server_date = http_date(-100)
    o.set("/c/dt", headers=cc("max-age=600", ("Date", server_date)))
    o.set("/c/nodt", headers=cc("max-age=600"))
    srv = start(sws, o, path_params="mem_size=1m", server="http2 on;" if http2 else "")
    kw = dict(http2=True, prior_knowledge=True) if http2 else {}
    get(srv, "/c/dt", **kw)
    for _ in range(2):                           # from the file, then from memory
        r, st = get(srv, "/c/dt", **kw)
        assert st == "HIT" and r.headers_all("Date") == [server_date]
    # without a Date from the server: the one the miss went out with
    r, _ = get(srv, "/c/nodt", **kw)
    first = date_of(r)
    time.sleep(1.1)
    r, st = get(srv, "/c/nodt", **kw)
    assert st == "HIT" and len(r.headers_all("Date")) == 1 and abs(date_of(r) - first) <= 1
    assert int(r.header("Age")) >= 1


# ---- parsing

@pytest.mark.parametrize("case", [str.lower, str.upper, lambda s: s.swapcase()])
def test_expires_in_any_letter_case(sws, corigin, case):
    o = corigin()
    o.set("/c/xc", headers=[("Expires", case(http_date(3600)))])
    o.set("/c/xp", headers=[("Expires", case(LM))])
    srv = start(sws, o)
    assert twice(srv, "/c/xc") == ("MISS", "HIT")
    assert twice(srv, "/c/xp") == ("MISS", "MISS")


@pytest.mark.parametrize("directive,gone", [
    ('no-cache="X-Secret"', ["X-Secret"]),
    ('no-cache=X-Secret', ["X-Secret"]),
    ('private="X-Secret, X-Other"', ["X-Secret", "X-Other"]),
    ('private="x-secret",no-cache="set-cookie"', ["X-Secret", "Set-Cookie"]),
])
def test_no_cache_and_private_with_fields_store_without_them(sws, corigin, directive, gone):
    # RFC 9111 5.2.2.4, 5.2.2.7: stored and reused without those fields
    o = corigin()
    hdrs = cc("max-age=60, " + directive, ("X-Secret", "s"), ("X-Other", "o"), ("X-Kept", "k"))
    if "set-cookie" in directive:          # else a cookie keeps it from being stored
        hdrs.append(("Set-Cookie", "a=1"))
    o.set("/c/f", body=b"f", headers=hdrs)
    srv = start(sws, o)
    r, st = get(srv, "/c/f")
    assert st == "MISS" and r.header("X-Secret") == "s"     # the miss has them all
    r, st = get(srv, "/c/f")
    assert (st, r.body, r.header("X-Kept")) == ("HIT", b"f", "k")
    for name in gone:
        assert r.header(name) is None, name
    assert o.count("/c/f") == 1


def test_invalid_values_still_count_as_stale(sws, corigin):
    o = corigin()
    o.set("/c/i1", headers=cc("max-age=abc"))
    o.set("/c/i2", headers=cc("max-age=0, max-age=60"))
    o.set("/c/i3", headers=cc("s-maxage=-1, max-age=60"))
    srv = start(sws, o)
    for p in ("/c/i1", "/c/i2", "/c/i3"):
        assert twice(srv, p) == ("MISS", "MISS"), p


# ---- HEAD (RFC 9111 4.3.5)

@pytest.mark.parametrize("params", ["", "mem_size=1m"])
def test_a_head_for_a_stale_entry_goes_as_head_and_updates_it(sws, corigin, params):
    o = corigin()
    o.set("/c/h", body=b"one", headers=cc("max-age=1", ("ETag", '"v1"'), ("X-V", "1")))
    # unconditional, so that the server answers 200 (a conditional HEAD
    # gets a 304, which updates the entry as for a GET)
    srv = start(sws, o, path_params=params, loc="proxy_cache_revalidate off;")
    assert get(srv, "/c/h")[1] == "MISS"
    time.sleep(1.1)
    o.set("/c/h", body=b"two", headers=cc("max-age=60", ("ETag", '"v1"'), ("X-V", "2")))
    r, st = get(srv, "/c/h", method="HEAD")
    assert (r.status, st, r.header("X-V")) == (200, "EXPIRED", "2")
    assert o.last().method == "HEAD" and o.count("/c/h") == 2
    # the entry has the new fields and freshness, and its body
    r, st = get(srv, "/c/h")
    assert (st, r.body, r.header("X-V")) == ("HIT", b"one", "2")
    assert o.count("/c/h") == 2


def test_a_head_with_other_validators_drops_the_entry(sws, corigin):
    o = corigin()
    o.set("/c/hv", body=b"one", headers=cc("max-age=1", ("ETag", '"v1"')))
    srv = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv, "/c/hv")
    time.sleep(1.1)
    o.set("/c/hv", body=b"two", headers=cc("max-age=60", ("ETag", '"v2"')))
    r, st = get(srv, "/c/hv", method="HEAD")
    assert r.status == 200 and o.last().method == "HEAD"
    r, st = get(srv, "/c/hv")
    assert (st, r.body) == ("MISS", b"two")
    assert get(srv, "/c/hv")[1] == "HIT"


# ---- 304 updates (RFC 9111 3.2, 4.3.1)

def test_a_stale_entry_with_a_validator_is_validated_conditionally(sws, corigin):
    o = corigin()
    o.set("/c/v", body=b"one", headers=cc("max-age=1", ("ETag", '"v"')))
    o.set("/c/lm", body=b"one", headers=cc("max-age=1", ("Last-Modified", LM)))
    srv = start(sws, o)                        # no proxy_cache_revalidate: the default
    get(srv, "/c/v")
    get(srv, "/c/lm")
    time.sleep(1.1)
    r, st = get(srv, "/c/v")
    assert (st, r.body) == ("REVALIDATED", b"one")
    assert o.last().header("if-none-match") == '"v"'
    r, st = get(srv, "/c/lm")
    assert (st, r.body) == ("REVALIDATED", b"one")
    assert o.last().header("if-modified-since") == LM
    # nginx's way, asked for
    srv2 = start(sws, o, loc="proxy_cache_revalidate off;")
    get(srv2, "/c/v")
    time.sleep(1.1)
    assert get(srv2, "/c/v")[1] == "EXPIRED"
    assert o.last().header("if-none-match") is None


@pytest.mark.parametrize("params", ["", "mem_size=1m"])
def test_a_304_with_set_cookie_and_fields_updates_the_entry(sws, corigin, params):
    o = corigin()
    o.set("/c/u3", body=b"one", headers=cc("max-age=1", ("ETag", '"u"'), ("X-V", "1")))
    srv = start(sws, o, path_params=params)
    get(srv, "/c/u3")
    time.sleep(1.1)
    o.set("/c/u3", body=b"two", headers=cc("max-age=60", ("ETag", '"u"'), ("X-V", "2"),
                                            ("Set-Cookie", "s=1")))
    r, st = get(srv, "/c/u3")
    assert (st, r.body, r.header("X-V"), r.header("Set-Cookie")) == \
        ("REVALIDATED", b"one", "2", "s=1")
    n = o.count("/c/u3")
    r, st = get(srv, "/c/u3")                  # fresh again, the new fields, no cookie
    assert (st, r.body, r.header("X-V"), r.header("Set-Cookie")) == ("HIT", b"one", "2", None)
    assert o.count("/c/u3") == n


# ---- stale

FAILS = {"503": dict(status=503), "close": dict(drop=True), "timeout": dict(delay=1.5)}


def stale_entry(sws, corigin, loc="", cache_control="max-age=1", path="/c/st"):
    o = corigin()
    o.set(path, body=b"old", headers=cc(cache_control))
    srv = start(sws, o, loc="proxy_read_timeout 1s; proxy_cache_revalidate off; " + loc)
    assert get(srv, path)[1] == "MISS"
    time.sleep(1.1)
    return o, srv


@pytest.mark.parametrize("how", sorted(FAILS))
def test_proxy_cache_use_stale_serves_the_entry(sws, corigin, how):
    o, srv = stale_entry(sws, corigin, "proxy_cache_use_stale error timeout http_503;")
    o.set("/c/st", body=b"new", headers=[], **FAILS[how])
    r, st = get(srv, "/c/st")
    assert (r.status, st, r.body) == (200, "STALE", b"old")
    assert int(r.header("Age")) >= 1


@pytest.mark.parametrize("how", sorted(FAILS))
def test_stale_if_error_serves_the_entry_within_its_window(sws, corigin, how):
    o, srv = stale_entry(sws, corigin, cache_control="max-age=1, stale-if-error=60")
    o.set("/c/st", body=b"new", headers=[], **FAILS[how])
    r, st = get(srv, "/c/st")
    assert (r.status, st, r.body) == (200, "STALE", b"old")


@pytest.mark.parametrize("how", sorted(FAILS))
def test_without_stale_permission_the_error_goes_to_the_client(sws, corigin, how):
    o, srv = stale_entry(sws, corigin)
    o.set("/c/st", body=b"new", headers=[], **FAILS[how])
    r, st = get(srv, "/c/st")
    assert r.status in (502, 503, 504) and r.body != b"old"


def test_stale_while_revalidate_within_and_past_its_window(sws, corigin):
    o, srv = stale_entry(sws, corigin, cache_control="max-age=1, stale-while-revalidate=2")
    o.set("/c/st", body=b"new", headers=cc("max-age=1, stale-while-revalidate=2"), delay=0.5)
    t = time.monotonic()
    r = h.curl(srv.url("/c/st"))
    # within the window: the stale entry at once, the update in the background
    assert r.body == b"old" and time.monotonic() - t < 0.45
    assert h.wait_for(lambda: any(s[1] == "/c/st" and s[3] == "STALE" for s in statuses(srv)),
                      timeout=5)
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    assert h.wait_for(lambda: get(srv, "/c/st")[0].body == b"new", timeout=5)
    # past the window (1 s fresh + 2 s): the origin answers this request
    time.sleep(3.2)
    o.set("/c/st", body=b"newest", headers=cc("max-age=60"))
    r, st = get(srv, "/c/st")
    assert (st, r.body) == ("EXPIRED", b"newest")


# ---- a variant miss validated with the stored variants' ETags (RFC 9111 4.3.1)

@pytest.mark.parametrize("params", ["", "mem_size=1m"])
def test_a_variant_miss_is_validated_with_the_stored_etags(sws, corigin, params):
    o = corigin()
    o.set("/c/va", body=b"same body", headers=cc("max-age=60", ("Vary", "X-Lang"),
                                                 ("ETag", '"s"')))
    srv = start(sws, o, path_params=params)
    assert get(srv, "/c/va", headers=["X-Lang: en"])[1] == "MISS"
    r, st = get(srv, "/c/va", headers=["X-Lang: fr"])
    assert (r.status, st, r.body) == (200, "REVALIDATED", b"same body")
    assert o.last().header("if-none-match") == '"s"'
    # the 304 made it this variant's entry too
    for lang in ("fr", "en"):
        r, st = get(srv, "/c/va", headers=["X-Lang: " + lang])
        assert (st, r.body) == ("HIT", b"same body"), lang
    assert o.count("/c/va") == 2
    # another representation: the server's 200 is stored for that variant alone
    o.set("/c/va", body=b"other", headers=cc("max-age=60", ("Vary", "X-Lang"), ("ETag", '"o"')))
    r, st = get(srv, "/c/va", headers=["X-Lang: de"])
    assert (st, r.body) == ("MISS", b"other")
    assert o.last().header("if-none-match") == '"s"'          # each tag once
    assert get(srv, "/c/va", headers=["X-Lang: de"])[1] == "HIT"
    r, st = get(srv, "/c/va", headers=["X-Lang: en"])
    assert (st, r.body) == ("HIT", b"same body")


def test_a_variant_miss_without_stored_etags_is_an_ordinary_miss(sws, corigin):
    o = corigin()
    o.set("/c/vn", body=b"v", headers=cc("max-age=60", ("Vary", "X-Lang")))
    srv = start(sws, o)
    assert get(srv, "/c/vn", headers=["X-Lang: en"])[1] == "MISS"
    r, st = get(srv, "/c/vn", headers=["X-Lang: fr"])
    assert (r.status, st) == (200, "MISS") and o.last().header("if-none-match") is None
    assert get(srv, "/c/vn", headers=["X-Lang: fr"])[1] == "HIT"


# ---- heuristic freshness (RFC 9111 4.2.2)

@pytest.mark.parametrize("status", [200, 301, 404, 410])
def test_heuristic_freshness_from_last_modified(sws, corigin, status):
    o = corigin()
    # modified 1000 s ago: 10 % gives 100 s
    o.set("/c/hf", body=b"h", status=status, headers=[("Last-Modified", http_date(-1000))])
    srv = start(sws, o)
    r, st = get(srv, "/c/hf")
    assert (r.status, st) == (status, "MISS")
    assert get(srv, "/c/hf")[1] == "HIT"


def test_heuristic_freshness_is_a_share_capped_and_not_for_every_status(sws, corigin):
    o = corigin()
    o.set("/c/young", body=b"y", headers=[("Last-Modified", http_date(-10))])  # 2 s
    o.set("/c/old", body=b"o", headers=[("Last-Modified", LM)])                 # capped
    o.set("/c/302", body=b"r", status=302, headers=[("Last-Modified", LM), ("Location", "/x")])
    o.set("/c/302p", body=b"r", status=302,
          headers=[("Last-Modified", LM), ("Location", "/x"), ("Cache-Control", "public")])
    srv = start(sws, o, loc="proxy_cache_heuristic 20% max=3s;")
    # lifetimes of 2 s and more: ages are whole seconds, so with 1 s a
    # second boundary between the two requests made the second stale
    assert twice(srv, "/c/young") == ("MISS", "HIT")          # 20 % of 10 s: 2 s
    time.sleep(2.1)
    assert get(srv, "/c/young")[1] == "REVALIDATED"          # stale: validated
    assert twice(srv, "/c/old") == ("MISS", "HIT")            # years: max=3s
    time.sleep(3.1)
    assert get(srv, "/c/old")[1] == "REVALIDATED"
    assert twice(srv, "/c/302") == ("MISS", "MISS")           # not heuristically cacheable
    assert twice(srv, "/c/302p") == ("MISS", "HIT")           # unless public


def test_heuristic_freshness_off_and_behind_explicit_and_configured(sws, corigin):
    o = corigin()
    o.set("/c/h1", body=b"h", headers=[("Last-Modified", http_date(-1000))])
    o.set("/c/h2", body=b"h", headers=[("Last-Modified", http_date(-1000)),
                                       ("Cache-Control", "max-age=0")])
    srv = start(sws, o, loc="proxy_cache_heuristic off;")     # nginx's behaviour
    assert twice(srv, "/c/h1") == ("MISS", "MISS")
    srv2 = start(sws, o)
    assert twice(srv2, "/c/h2") == ("MISS", "MISS")           # explicit wins
    # configured wins (2 s: ages are whole seconds, 1 s could end between
    # the two requests)
    srv3 = start(sws, o, loc="proxy_cache_valid 200 2s;")
    assert twice(srv3, "/c/h1") == ("MISS", "HIT")
    time.sleep(2.1)
    assert get(srv3, "/c/h1")[1] == "REVALIDATED"


def test_heuristic_directive_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { location / { proxy_cache_heuristic 0%; } }", "percentage"),
        ("server { location / { proxy_cache_heuristic 10; } }", "percentage"),
        ("server { location / { proxy_cache_heuristic 101%; } }", "percentage"),
        ("server { location / { proxy_cache_heuristic 10% max=x; } }", "max= time"),
        ("server { location / { proxy_cache_heuristic 10% 5s; } }", "max=TIME"),
        ("server { location / { proxy_cache_heuristic off max=1s; } }", "nothing after"),
    ])


# ---- mem_size's default

def test_a_configuration_without_mem_size_gets_memory_hits(sws, corigin):
    from cacheorigin import source
    o = corigin()
    srv = start(sws, o)                          # keys_zone=c:1m, no mem_size
    get(srv, "/c/m")
    r, st = get(srv, "/c/m")
    assert (st, r.body) == ("HIT", b"/c/m")
    if source(srv) != "memory":                  # promoted at its first file hit
        assert get(srv, "/c/m")[1] == "HIT"
    assert source(srv) == "memory"
    srv2 = start(sws, o, path_params="mem_size=0")   # off, as asked
    get(srv2, "/c/m")
    get(srv2, "/c/m")
    assert get(srv2, "/c/m")[1] == "HIT" and source(srv2) == "file"
