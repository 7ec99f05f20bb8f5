"""The response_delay of RFC 9111 4.2.3 in a stored response's age: the
time the origin took, in whole seconds, not the seconds the clock turned
while it answered. A 300 ms answer that straddles a second's turn is not a
second old: with max-age=1 it is stored, not refused as stale on arrival
(a fill of the cache tests' max-age=1 responses was lost that way whenever
it crossed a second, now and then)."""
import time

from cacheorigin import corigin, get, start  # noqa: F401


def at_fraction(lo, hi):
    """Wait until the wall clock's fraction of a second is in [lo, hi)."""
    deadline = time.time() + 3
    while time.time() < deadline:
        f = time.time() % 1
        if lo <= f < hi:
            return
        time.sleep(0.005)
    raise AssertionError("the clock never reached the fraction")


def test_an_answer_across_a_second_turn_is_stored(sws, corigin):
    o = corigin()
    o.set("/c/turn", body=b"slow", headers=[("Cache-Control", "max-age=1")], delay=0.3)
    srv = start(sws, o)
    at_fraction(0.75, 0.80)
    r, st = get(srv, "/c/turn")                  # asked at x.75, answered at x+1.05
    assert r.status == 200 and st == "MISS"
    r, st = get(srv, "/c/turn")
    assert r.body == b"slow" and st == "HIT"
    assert o.count("/c/turn") == 1


def test_an_answer_that_took_longer_than_max_age_is_not_stored(sws, corigin):
    o = corigin()
    o.set("/c/long", body=b"slow", headers=[("Cache-Control", "max-age=1")], delay=1.2)
    srv = start(sws, o)
    r, st = get(srv, "/c/long")
    assert r.status == 200 and st == "MISS"
    r, st = get(srv, "/c/long")
    assert st == "MISS" and o.count("/c/long") == 2
