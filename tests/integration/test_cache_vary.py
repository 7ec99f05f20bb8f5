"""Variants (RFC 9111 4.1): the request's Vary'd fields normalised before
they select a variant (Accept-Language and Accept-Encoding as sets of
values with their q-values, any other field's whitespace), Vary: * never
a hit, and a validation's 304 that names no stored variant (4.3.4): asked
again without validators instead of a 502. Each against a real origin
(cacheorigin.py), beside nginx 1.22 where nginx has the behaviour."""
import os

import pytest

import swsharness as h
from cacheorigin import CacheOrigin, corigin, get, start  # noqa: F401
from test_nginx_sites import NGINX, start_server


def cc(value, *more):
    return [("Cache-Control", value)] + list(more)


class OnceOrigin(CacheOrigin):
    """A CacheOrigin whose next answers for a path can be scripted:
    o.once(path, status, headers, body) answers the next request for it so,
    whatever it asks; then the path's set() answer again."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.scripted = {}

    def once(self, path, status, headers, body=b""):
        with self.lock:
            self.scripted.setdefault(path, []).append((status, list(headers), body))

    def _route(self, c, req):
        with self.lock:
            queue = self.scripted.get(req.path)
            step = queue.pop(0) if queue else None
        if step is None:
            return super()._route(c, req)
        status, headers, body = step
        if status == 304:
            c.sendall(self._head(304, headers))
        else:
            self._send(c, status, body, headers)
        return True


@pytest.fixture
def once_origin():
    started = []

    def make():
        o = OnceOrigin("origin")
        started.append(o)
        return o

    yield make
    for o in started:
        o.stop()


# ---- a 304 that names no stored variant (RFC 9111 4.3.4)

@pytest.mark.parametrize("etag304", [None, '"nowhere"'])
def test_a_304_naming_no_stored_variant_is_asked_again(sws, once_origin, etag304):
    o = once_origin()
    o.set("/c/v304", body=b"english", headers=cc("max-age=60", ("Vary", "X-Lang"),
                                                  ("ETag", '"en"')))
    srv = start(sws, o)
    assert get(srv, "/c/v304", headers=["X-Lang: en"])[1] == "MISS"
    # fr: validated with "en"; the origin's 304 names no stored variant
    o.once("/c/v304", 304, cc("max-age=60", ("Vary", "X-Lang"))
           + ([("ETag", etag304)] if etag304 else []))
    o.set("/c/v304", body=b"french", headers=cc("max-age=60", ("Vary", "X-Lang"),
                                                 ("ETag", '"fr"')))
    r, st = get(srv, "/c/v304", headers=["X-Lang: fr"])
    assert (r.status, st, r.body) == (200, "MISS", b"french")
    asked = [q for q in o.requests if q.path == "/c/v304"]
    assert len(asked) == 3
    assert asked[1].header("if-none-match") == '"en"'
    assert asked[2].header("if-none-match") is None      # again, unconditionally
    # the 200 was stored for fr, en is untouched
    r, st = get(srv, "/c/v304", headers=["X-Lang: fr"])
    assert (st, r.body) == ("HIT", b"french")
    r, st = get(srv, "/c/v304", headers=["X-Lang: en"])
    assert (st, r.body) == ("HIT", b"english")


def test_a_304_naming_no_variant_goes_again_with_the_clients_condition(sws, once_origin):
    o = once_origin()
    o.set("/c/vc", body=b"english", headers=cc("max-age=60", ("Vary", "X-Lang"),
                                                ("ETag", '"en"')))
    srv = start(sws, o)
    assert get(srv, "/c/vc", headers=["X-Lang: en"])[1] == "MISS"
    o.once("/c/vc", 304, cc("max-age=60", ("Vary", "X-Lang"), ("ETag", '"elsewhere"')))
    o.set("/c/vc", body=b"french", headers=cc("max-age=60", ("Vary", "X-Lang"),
                                               ("ETag", '"fr"')))
    # the client holds "fr" itself: the second request carries its tag, and
    # the origin's 304 to it is the client's answer
    r, st = get(srv, "/c/vc", headers=["X-Lang: fr", 'If-None-Match: "fr"'])
    assert r.status == 304 and r.body == b""
    asked = [q for q in o.requests if q.path == "/c/vc"]
    assert [q.header("if-none-match") for q in asked[1:]] == ['"en"', '"fr"']


def test_a_304_with_another_strong_etag_does_not_update_the_entry(sws, once_origin):
    o = once_origin()
    o.set("/c/s304", body=b"old", headers=cc("max-age=60", ("ETag", '"one"')))
    srv = start(sws, o)
    assert get(srv, "/c/s304")[1] == "MISS"
    # the client's no-cache makes the cache validate it; the 304 names
    # another representation: not the stored one's update
    o.once("/c/s304", 304, cc("max-age=60", ("ETag", '"two"')))
    o.set("/c/s304", body=b"new", headers=cc("max-age=60", ("ETag", '"two"')))
    r, st = get(srv, "/c/s304", headers=["Cache-Control: no-cache"])
    assert (r.status, r.body) == (200, b"new")
    asked = [q for q in o.requests if q.path == "/c/s304"]
    assert [q.header("if-none-match") for q in asked] == [None, '"one"', None]
    r, st = get(srv, "/c/s304")
    assert (st, r.body) == ("HIT", b"new")


# ---- the normal form of the Vary'd fields

def varied(sws, corigin, path, field):
    """An origin whose path varies on field, and scalwsd's cache before it."""
    o = corigin()
    o.set(path, body=b"v", headers=cc("max-age=60", ("Vary", field)))
    return o, start(sws, o)


def variant_statuses(srv, path, field, values):
    return [(v, get(srv, path, headers=["%s: %s" % (field, v)])[1]) for v in values]


def test_accept_language_is_a_set_with_q_values(sws, corigin):
    o, srv = varied(sws, corigin, "/c/al", "Accept-Language")
    seen = variant_statuses(srv, "/c/al", "Accept-Language", [
        "en-US,fr;q=0.5",
        "fr;q=0.5, en-US",                  # order
        "EN-us , FR;q=0.5",                 # case, whitespace
        "en-US;q=1.0,fr;q=0.50",            # q=1 is none, 0.50 is 0.5
        "en-US, fr;q=0.5, en-US",           # a repeat
        " fr ; q=0.500 ,en-us ",
        "en-US,fr;q=0.6",                   # another q: another variant
        "en-US",                            # another set
        "en-US,fr;q=0.5,de;q=0.1",
    ])
    assert seen == [
        ("en-US,fr;q=0.5", "MISS"), ("fr;q=0.5, en-US", "HIT"), ("EN-us , FR;q=0.5", "HIT"),
        ("en-US;q=1.0,fr;q=0.50", "HIT"), ("en-US, fr;q=0.5, en-US", "HIT"),
        (" fr ; q=0.500 ,en-us ", "HIT"), ("en-US,fr;q=0.6", "MISS"), ("en-US", "MISS"),
        ("en-US,fr;q=0.5,de;q=0.1", "MISS"),
    ]
    assert o.count("/c/al") == 4


def test_accept_encoding_is_a_set_with_q_values(sws, corigin):
    o, srv = varied(sws, corigin, "/c/ae", "Accept-Encoding")
    seen = variant_statuses(srv, "/c/ae", "Accept-Encoding", [
        "gzip, deflate, br", "br,gzip,deflate", "GZIP, Deflate,  BR", "gzip;q=1, br, deflate",
        "gzip", "gzip;q=0, br, deflate",
    ])
    assert [s for _, s in seen] == ["MISS", "HIT", "HIT", "HIT", "MISS", "MISS"]


def test_an_unknown_field_differs_only_in_whitespace(sws, corigin):
    o, srv = varied(sws, corigin, "/c/ux", "X-Thing")
    seen = variant_statuses(srv, "/c/ux", "X-Thing", [
        "a, b", "a,b", "a ,  b", "\ta , b",
        "b, a",                              # order is the field's own
        "A, b",                              # and so is case
        'a, "b , c"',                        # inside a quoted string: as it came
        'a,"b , c"',
        'a, "b,c"',
        "a b",                               # whitespace inside a value stays
        "a  b",
    ])
    assert [s for _, s in seen] == ["MISS", "HIT", "HIT", "HIT", "MISS", "MISS",
                                    "MISS", "HIT", "MISS", "MISS", "MISS"]


def test_several_lines_are_one_list(sws, corigin):
    o, srv = varied(sws, corigin, "/c/ul", "Accept-Language")
    assert get(srv, "/c/ul", headers=["Accept-Language: de, fr"])[1] == "MISS"
    assert get(srv, "/c/ul", headers=["Accept-Language: fr",
                                      "Accept-Language: de"])[1] == "HIT"


def test_an_absent_field_is_its_own_variant(sws, corigin):
    o, srv = varied(sws, corigin, "/c/ua", "X-Thing")
    assert get(srv, "/c/ua")[1] == "MISS"
    assert get(srv, "/c/ua")[1] == "HIT"
    assert get(srv, "/c/ua", headers=["X-Thing: a"])[1] == "MISS"
    assert get(srv, "/c/ua")[1] == "HIT"


@pytest.mark.parametrize("vary", ["*", "Accept, *", "X-A,*", "*, X-A"])
def test_vary_star_is_never_a_hit(sws, corigin, vary):
    o = corigin()
    o.set("/c/vs", body=b"vs", headers=cc("max-age=60", ("Vary", vary)))
    srv = start(sws, o)
    assert [get(srv, "/c/vs")[1] for _ in range(3)] == ["MISS"] * 3


def test_a_star_inside_a_field_name_is_not_vary_star(sws, corigin):
    o = corigin()
    # "X-*" is a field name (a token may hold "*"), not the member "*"
    o.set("/c/vx", body=b"vx", headers=cc("max-age=60", ("Vary", "X-*")))
    srv = start(sws, o)
    assert get(srv, "/c/vx", headers=["X-*: 1"])[1] == "MISS"
    assert get(srv, "/c/vx", headers=["X-*: 1"])[1] == "HIT"
