"""The cache module when many ask at once or the origin fails:
proxy_cache_lock (one fill per key, the others wait up to
proxy_cache_lock_timeout), proxy_cache_use_stale (error, timeout, http_5xx,
updating), and the response's own stale-if-error and
stale-while-revalidate."""
import threading
import time

import pytest

import swsharness as h
from cacheorigin import corigin, get, start, statuses  # noqa: F401


def cc(value, *more):
    return [("Cache-Control", value)] + list(more)


def expire():
    """max-age=1 counts in whole seconds of the server's clock: 2.1 s after
    the fill the entry is stale whatever the fraction it was made at."""
    time.sleep(2.1)


def many(srv, path, n, **kw):
    out, errors = [None] * n, []

    def one(i):
        try:
            out[i] = h.curl(srv.url(path), timeout=20, **kw)
        except Exception as e:            # reported below
            errors.append(e)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors[:3]
    return out


@pytest.mark.parametrize("workers", [1, 2])
def test_fifty_concurrent_misses_make_one_origin_request(sws, corigin, workers):
    o = corigin()
    o.set("/c/lk", body=b"locked" * 1000, headers=cc("max-age=60"), delay=0.5)
    srv = start(sws, o, "mem_size=1m", loc="proxy_cache_lock on;", workers=workers)
    out = many(srv, "/c/lk", 50)
    assert all(r.status == 200 and r.body == b"locked" * 1000 for r in out)
    assert o.count("/c/lk") == 1
    assert h.wait_for(lambda: len(statuses(srv)) == 50, timeout=5)
    st = [s[3] for s in statuses(srv)]
    assert st.count("MISS") == 1 and st.count("HIT") == 49, st


def test_without_the_lock_each_miss_asks(sws, corigin):
    o = corigin()
    o.set("/c/nl", body=b"x", headers=cc("max-age=60"), delay=0.5)
    srv = start(sws, o)
    many(srv, "/c/nl", 5)
    assert o.count("/c/nl") == 5


def test_lock_timeout_goes_to_the_origin_without_storing(sws, corigin):
    o = corigin()
    o.set("/c/lt", body=b"slow", headers=cc("max-age=60"), delay=2)
    srv = start(sws, o, loc="proxy_cache_lock on; proxy_cache_lock_timeout 300ms;")
    bg = h.Background(lambda ev: h.curl(srv.url("/c/lt"), timeout=20))
    bg.start()
    assert h.wait_for(lambda: o.count("/c/lt") == 1, timeout=5)
    o.set("/c/lt", body=b"second", headers=cc("max-age=60"))
    r, st = get(srv, "/c/lt")                      # waited 300 ms, then went itself
    assert r.body == b"second" and st == "MISS"
    assert bg.finish().body == b"slow"
    r, st = get(srv, "/c/lt")
    assert st == "HIT" and r.body == b"slow"       # the first one's fill, not the second's


def test_a_client_that_goes_away_lets_go_of_the_lock(sws, corigin):
    o = corigin()
    o.set("/c/gone", body=b"x" * 100, headers=cc("max-age=60"), cut=True)
    srv = start(sws, o, loc="proxy_cache_lock on; proxy_cache_lock_timeout 10s;")
    try:
        h.curl(srv.url("/c/gone"))
    except Exception:
        pass
    o.set("/c/gone", body=b"whole", headers=cc("max-age=60"))
    r, st = get(srv, "/c/gone")                    # at once, not after 10 s
    assert r.body == b"whole" and st == "MISS"


def stale_setup(sws, corigin, loc="", headers=None, path="/c/st"):
    o = corigin()
    o.set(path, body=b"stale body", headers=headers or cc("max-age=1"))
    srv = start(sws, o, loc=loc)
    assert get(srv, path)[1] == "MISS"
    expire()
    return o, srv


def test_use_stale_error_when_the_origin_is_gone(sws, corigin):
    o, srv = stale_setup(sws, corigin, loc="proxy_cache_use_stale error timeout;")
    o.stop()
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"
    assert int(r.header("Age")) >= 1


def test_without_use_stale_the_error_goes_through(sws, corigin):
    o, srv = stale_setup(sws, corigin)
    o.stop()
    r, st = get(srv, "/c/st")
    assert r.status == 502 and st == "EXPIRED"


def test_use_stale_timeout(sws, corigin):
    o, srv = stale_setup(sws, corigin, loc="proxy_cache_use_stale timeout; "
                                           "proxy_read_timeout 300ms;")
    o.hang = True
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"


def test_use_stale_http_5xx(sws, corigin):
    o, srv = stale_setup(sws, corigin, loc="proxy_cache_use_stale http_500 http_503;")
    o.fail = 500
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"
    o.fail = 503
    assert get(srv, "/c/st")[0].status == 200
    o.fail = 502                                  # not listed: passed on
    r, st = get(srv, "/c/st")
    assert r.status == 502 and r.body == b"failing\n"


def test_stale_if_error_from_the_response(sws, corigin):
    o, srv = stale_setup(sws, corigin, headers=cc("max-age=1, stale-if-error=60"))
    o.fail = 503
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"


def test_must_revalidate_is_never_served_stale(sws, corigin):
    o, srv = stale_setup(sws, corigin, loc="proxy_cache_use_stale error http_500;",
                         headers=cc("max-age=1, must-revalidate, stale-if-error=60"))
    o.fail = 500
    r, st = get(srv, "/c/st")
    assert r.status == 500 and st == "EXPIRED"


def updating(sws, corigin, loc, headers):
    o, srv = stale_setup(sws, corigin, loc=loc, headers=headers)
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"), delay=1.5)
    bg = h.Background(lambda ev: h.curl(srv.url("/c/st"), timeout=20))
    bg.start()
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    r, st = get(srv, "/c/st")                     # while the update runs
    assert r.body == b"stale body" and st == "UPDATING"
    assert bg.finish().body == b"new body"
    r, st = get(srv, "/c/st")
    assert r.body == b"new body" and st == "HIT"
    assert o.count("/c/st") == 2


def test_use_stale_updating(sws, corigin):
    updating(sws, corigin, "proxy_cache_use_stale updating;", cc("max-age=1"))


def test_stale_while_revalidate_from_the_response(sws, corigin):
    # RFC 5861 3: the request that finds the entry expired gets it at once
    # and the update runs in the background; the others get UPDATING
    o, srv = stale_setup(sws, corigin, headers=cc("max-age=1, stale-while-revalidate=60"))
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"), delay=1.5)
    assert h.curl(srv.url("/c/st")).body == b"stale body"
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    r, st = get(srv, "/c/st")                     # while the update runs
    assert r.body == b"stale body" and st == "UPDATING"
    assert h.wait_for(lambda: get(srv, "/c/st")[0].body == b"new body", timeout=5)
    assert o.count("/c/st") == 2


def test_updating_waits_under_the_lock_without_use_stale(sws, corigin):
    o, srv = stale_setup(sws, corigin, loc="proxy_cache_lock on;")
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"), delay=1)
    bg = h.Background(lambda ev: h.curl(srv.url("/c/st"), timeout=20))
    bg.start()
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    r, st = get(srv, "/c/st")                     # waits for the update, then a hit
    assert r.body == b"new body" and st == "HIT"
    bg.finish()
    assert o.count("/c/st") == 2


@pytest.mark.parametrize("how", ["use_stale", "swr", "revalidate"])
def test_background_update(sws, corigin, how):
    loc = "proxy_cache_background_update on; "
    hdrs = cc("max-age=1")
    if how == "use_stale":
        loc += "proxy_cache_use_stale updating;"
    elif how == "swr":
        hdrs = cc("max-age=1, stale-while-revalidate=60")
    else:
        loc += "proxy_cache_use_stale updating; proxy_cache_revalidate on;"
        hdrs = cc("max-age=1", ("ETag", '"bg"'))
    o, srv = stale_setup(sws, corigin, loc=loc, headers=hdrs)
    new = cc("max-age=60", ("ETag", '"bg"')) if how == "revalidate" else cc("max-age=60")
    o.set("/c/st", body=b"stale body" if how == "revalidate" else b"new body", headers=new,
          delay=1)
    # the request that starts the update is answered with the stale entry
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"
    assert o.count("/c/st") == 2
    if how == "revalidate":
        assert o.last().header("If-None-Match") == '"bg"'

    # the update lands in the cache: fresh again, without another origin request
    def updated():
        r, st = get(srv, "/c/st")
        return st == "HIT"
    assert h.wait_for(updated, timeout=10)
    r, st = get(srv, "/c/st")
    assert r.body == (b"stale body" if how == "revalidate" else b"new body")
    assert o.count("/c/st") == 2


def test_background_update_of_a_failing_origin_keeps_the_entry(sws, corigin):
    o, srv = stale_setup(sws, corigin, loc="proxy_cache_background_update on; "
                                           "proxy_cache_use_stale updating error;")
    o.stop()
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"
    r, st = get(srv, "/c/st")
    assert r.status == 200 and r.body == b"stale body" and st == "STALE"


def test_background_update_logs_what_the_client_got(sws, corigin):
    # the update was answered 304, the client got the stale entry's 200:
    # the log says 200, and the update's head did not mix with the
    # client's (the entry is fresh by the update's own max-age)
    loc = ("proxy_cache_background_update on; proxy_cache_use_stale updating; "
           "proxy_cache_revalidate on;")
    o, srv = stale_setup(sws, corigin, loc=loc, headers=cc("max-age=1", ("ETag", '"lg"')))
    o.set("/c/st", body=b"stale body", headers=cc("max-age=60", ("ETag", '"lg"')))
    r, st = get(srv, "/c/st")
    assert (r.status, st) == (200, "STALE")
    assert h.wait_for(lambda: get(srv, "/c/st")[1] == "HIT", timeout=10)
    line = next(s for s in statuses(srv) if s[3] == "STALE")
    assert line[2] == "200"
    r, st = get(srv, "/c/st")
    assert r.headers_all("Cache-Control") == ["max-age=60"] and int(r.header("Age")) < 5
