"""The request's own Cache-Control (RFC 9111 5.2.1), against a real origin
(cacheorigin.py): no-cache and max-age send a fresh entry's request to the
origin (validated when the entry has validators and
proxy_cache_revalidate is on), min-fresh asks for an entry fresh for that
much longer, max-stale takes a stale entry as it is unless the entry forbids
it; the entry stays for the other requests; and
proxy_cache_request_directives off ignores them all, as nginx does.
$upstream_cache_status comes from the access log."""
import pytest

import swsharness as h
from cacheorigin import corigin, get, start  # noqa: F401


def cc(value, *more):
    return [("Cache-Control", value)] + list(more)


def req(value):
    return ["Cache-Control: " + value]


@pytest.mark.parametrize("directive", ["no-cache", "max-age=0, no-cache", "NO-CACHE"])
def test_no_cache_revalidates_a_fresh_entry(sws, corigin, directive):
    o = corigin()
    o.set("/c/nc", body=b"kept", headers=cc("max-age=600", ("ETag", '"v1"')))
    srv = start(sws, o, loc="proxy_cache_revalidate on;")
    assert get(srv, "/c/nc")[1] == "MISS"
    r, st = get(srv, "/c/nc", headers=req(directive))
    assert (r.status, st, r.body) == (200, "REVALIDATED", b"kept")
    assert o.last().header("If-None-Match") == '"v1"'
    assert o.count("/c/nc") == 2
    # the others still get the entry without asking the origin
    r, st = get(srv, "/c/nc")
    assert (st, r.body) == ("HIT", b"kept") and o.count("/c/nc") == 2


def test_no_cache_without_revalidation_replaces_the_entry(sws, corigin):
    o = corigin()
    o.set("/c/nr", body=b"old", headers=cc("max-age=600"))
    srv = start(sws, o)
    get(srv, "/c/nr")
    o.set("/c/nr", body=b"new", headers=cc("max-age=600"))
    r, st = get(srv, "/c/nr", headers=req("no-cache"))
    assert (st, r.body) == ("MISS", b"new")
    r, st = get(srv, "/c/nr")
    assert (st, r.body) == ("HIT", b"new") and o.count("/c/nr") == 2


def test_a_forced_request_answered_with_an_error_stores_nothing(sws, corigin):
    o = corigin()
    o.set("/c/ne", body=b"good", headers=cc("max-age=600"))
    srv = start(sws, o)
    get(srv, "/c/ne")
    o.set("/c/ne", body=b"bad", status=500, headers=[])
    r, st = get(srv, "/c/ne", headers=req("no-cache"))
    assert r.status == 500
    r, st = get(srv, "/c/ne")
    assert (r.status, st, r.body) == (200, "HIT", b"good")


def test_max_age_against_the_entry_age(sws, corigin):
    o = corigin()
    o.set("/c/ma", body=b"aged", headers=cc("max-age=600", ("Age", "100")))
    srv = start(sws, o)
    get(srv, "/c/ma")
    assert get(srv, "/c/ma", headers=req("max-age=200"))[1] == "HIT"
    assert o.count("/c/ma") == 1
    r, st = get(srv, "/c/ma", headers=req("max-age=50"))
    assert (r.status, st) == (200, "MISS") and o.count("/c/ma") == 2
    # an invalid value counts as 0 (RFC 9111 1.2.2): the entry is 100 s old
    assert get(srv, "/c/ma", headers=req("max-age=5x"))[1] == "MISS"
    assert o.count("/c/ma") == 3


def test_min_fresh(sws, corigin):
    o = corigin()
    o.set("/c/mf", headers=cc("max-age=60"))
    srv = start(sws, o)
    get(srv, "/c/mf")
    assert get(srv, "/c/mf", headers=req("min-fresh=30"))[1] == "HIT"
    assert get(srv, "/c/mf", headers=req("min-fresh=120"))[1] == "MISS"
    assert o.count("/c/mf") == 2


def test_max_stale_takes_a_stale_entry_as_it_is(sws, corigin):
    o = corigin()
    o.set("/c/ms", body=b"one", headers=cc("max-age=1"))
    srv = start(sws, o)
    get(srv, "/c/ms")
    o.set("/c/ms", body=b"two", headers=cc("max-age=60"))
    # stale now: within max-stale the old body comes back, the origin is
    # not asked; without a value any staleness is taken
    assert h.wait_for(lambda: get(srv, "/c/ms", headers=req("max-stale=1"))[1] != "HIT",
                      timeout=5)
    for value in ("max-stale=3600", "max-stale"):
        r, st = get(srv, "/c/ms", headers=req(value))
        assert (r.status, st, r.body) == (200, "STALE", b"one")
        assert int(r.header("Age")) >= 1
    n = o.count("/c/ms")
    # with max-age as well, the entry must be young enough too
    assert get(srv, "/c/ms", headers=req("max-stale=3600, max-age=3600"))[1] == "STALE"
    assert o.count("/c/ms") == n
    r, st = get(srv, "/c/ms")
    assert (st, r.body) == ("EXPIRED", b"two")


def test_max_stale_never_overrides_must_revalidate(sws, corigin):
    o = corigin()
    o.set("/c/mr", body=b"one", headers=cc("max-age=1, must-revalidate"))
    srv = start(sws, o)
    get(srv, "/c/mr")
    o.set("/c/mr", body=b"two", headers=cc("max-age=60"))

    def refetched():
        r, st = get(srv, "/c/mr", headers=req("max-stale"))
        return st == "EXPIRED" and r.body == b"two"
    assert h.wait_for(refetched, timeout=5)


def test_off_ignores_the_request_directives(sws, corigin):
    o = corigin()
    o.set("/c/off", body=b"x", headers=cc("max-age=600", ("Age", "100")))
    srv = start(sws, o, loc="proxy_cache_request_directives off;")
    get(srv, "/c/off")
    for value in ("no-cache", "max-age=0", "min-fresh=10000"):
        assert get(srv, "/c/off", headers=req(value))[1] == "HIT"
    assert o.count("/c/off") == 1


def test_no_store_and_only_if_cached_hold_with_off(sws, corigin):
    # off is for the four freshness directives: no-store and only-if-cached
    # are still honoured
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_request_directives off;")
    r, st = get(srv, "/c/oic", headers=req("only-if-cached"))
    assert r.status == 504 and o.count("/c/oic") == 0
    get(srv, "/c/ns", headers=req("no-store"))
    assert get(srv, "/c/ns")[1] == "MISS"
