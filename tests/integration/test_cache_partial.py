"""Partial content in the cache (RFC 9111 3.3 and 3.4, RFC 9110 14;
proxy_cache_partial, issue 26): a 206 from the origin stored as a part of
its representation, combined with later parts of the same one, ranges the
parts hold answered from them without asking the origin, the whole made
an ordinary entry once the parts hold it. Against a real origin that
answers ranges (RangeOrigin below), whose requests are counted."""
import os
import re

import pytest

import swsharness as h
from cacheorigin import CacheOrigin, get, start
from proxyorigin import pattern
from test_nginx_sites import NGINX, start_server

BODY = pattern(1000)


class RangeOrigin(CacheOrigin):
    """CacheOrigin whose /c/ paths set with ranges=True answer one range
    of Range (A-B, A-, -N) with a 206; several ranges, no Range, or an
    If-Range other than the ETag: the whole (200). cap=N: a request
    without Range gets the first N bytes in a 206 (an origin that only
    answers ranges). content_range=V: every 206 says V instead ("":
    none). An ETag in If-None-Match: 304."""

    def set_ranges(self, path, body=BODY, etag='"v1"', cc="max-age=60", cap=None,
                   content_range=None, extra=()):
        hdrs = [("Cache-Control", cc)] + list(extra)
        if etag:
            hdrs.append(("ETag", etag))
        with self.lock:
            self.routes[path] = dict(body=body, headers=hdrs, status=200, ranges=True,
                                     cap=cap, content_range=content_range)

    def _route(self, c, req):
        with self.lock:
            spec = self.routes.get(req.path)
        if not spec or not spec.get("ranges"):
            return super()._route(c, req)
        body, hdrs = spec["body"], spec["headers"]
        etag = next((v for k, v in hdrs if k == "ETag"), None)
        inm = req.header("if-none-match")
        if etag and inm and etag in [t.strip() for t in inm.split(",")]:
            c.sendall(self._head(304, hdrs))
            return True
        rng = req.header("range")
        if_range = req.header("if-range")
        span = None
        if rng and (if_range is None or if_range == etag):
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if m and (m.group(1) or m.group(2)):
                if not m.group(1):
                    span = (max(0, len(body) - int(m.group(2))), len(body))
                else:
                    a = int(m.group(1))
                    b = int(m.group(2)) + 1 if m.group(2) else len(body)
                    span = (a, min(b, len(body)))
                if span[0] >= len(body):
                    self._send(c, 416, b"", [("Content-Range", "bytes */%d" % len(body))])
                    return True
        elif rng is None and spec["cap"]:
            span = (0, min(spec["cap"], len(body)))
        if span is None:
            self._send(c, 200, body, hdrs)
            return True
        cr = spec["content_range"]
        if cr is None:
            cr = "bytes %d-%d/%d" % (span[0], span[1] - 1, len(body))
        self._send(c, 206, body[span[0]:span[1]], hdrs + ([("Content-Range", cr)] if cr else []))
        return True

    def ranges_seen(self, path):
        with self.lock:
            return [q.header("range") for q in self.requests if q.path == path]


@pytest.fixture
def rorigin():
    started = []

    def run():
        o = RangeOrigin("origin")
        started.append(o)
        return o

    yield run
    for o in started:
        o.stop()


# the client's Range (and If-Range) passed on by the configuration, as for
# large files
FORWARD = "proxy_set_header Range $http_range; proxy_set_header If-Range $http_if_range;"


def rget(srv, path, rng=None, more=(), **kw):
    hdrs = (["Range: " + rng] if rng else []) + list(more)
    return get(srv, path, headers=hdrs, **kw)


def with_part(sws, rorigin, path, rng="bytes=0-99", loc=FORWARD, **kw):
    """An origin for path (set_ranges(**kw)), scalwsd in front of it, and
    the part rng asked for once (a MISS)."""
    o = rorigin()
    o.set_ranges(path, **kw)
    srv = start(sws, o, loc=loc)
    assert rget(srv, path, rng)[1] == "MISS"
    return o, srv


def test_parts_are_stored_combined_and_completed(sws, rorigin):
    o = rorigin()
    o.set_ranges("/c/p")
    srv = start(sws, o, loc=FORWARD)

    r, st = rget(srv, "/c/p", "bytes=0-99")
    assert (r.status, st, r.body) == (206, "MISS", BODY[:100])
    r, st = rget(srv, "/c/p", "bytes=10-49")
    assert (r.status, st, r.body) == (206, "HIT", BODY[10:50])
    assert r.header("Content-Range") == "bytes 10-49/1000"
    assert r.header("Content-Length") == "40" and r.header("ETag") == '"v1"'
    assert r.header("Age") is not None
    assert o.count("/c/p") == 1                    # the origin was not asked again

    r, st = rget(srv, "/c/p", "bytes=500-599")     # another part
    assert (r.status, st, r.body) == (206, "MISS", BODY[500:600])
    r, st = rget(srv, "/c/p", "bytes=520-540")
    assert (r.status, st, r.body) == (206, "HIT", BODY[520:541])
    r, st = rget(srv, "/c/p", "bytes=50-549")      # across the gap: to the origin
    assert (r.status, st, r.body) == (206, "MISS", BODY[50:550])
    assert o.count("/c/p") == 3
    r, st = rget(srv, "/c/p", "bytes=0-599")       # now one part
    assert (r.status, st, r.body) == (206, "HIT", BODY[:600])
    assert o.count("/c/p") == 3

    r, st = rget(srv, "/c/p", "bytes=600-")        # the rest: the whole is stored
    assert (r.status, st, r.body) == (206, "MISS", BODY[600:])
    r, st = rget(srv, "/c/p")
    assert (r.status, st, r.body) == (200, "HIT", BODY)
    assert r.header("Content-Range") is None and r.header("ETag") == '"v1"'
    r, st = rget(srv, "/c/p", "bytes=-10")
    assert (r.status, st, r.body) == (206, "HIT", BODY[-10:])
    r, st = rget(srv, "/c/p", "bytes=2000-")       # unsatisfiable on the whole
    assert (r.status, st) == (416, "HIT")
    assert r.header("Content-Range") == "bytes */1000"
    r, st = rget(srv, "/c/p", "bytes=0-9,20-29")   # several: multipart, as for files
    assert (r.status, st) == (206, "HIT")
    assert r.header("Content-Type").startswith("multipart/byteranges")
    r, st = rget(srv, "/c/p", method="HEAD")
    assert (r.status, st, r.header("Content-Length"), r.body) == (200, "HIT", "1000", b"")
    assert o.count("/c/p") == 4
    assert o.ranges_seen("/c/p") == ["bytes=0-99", "bytes=500-599", "bytes=50-549",
                                     "bytes=600-"]


def test_suffix_and_open_ranges_from_a_part(sws, rorigin):
    o = rorigin()
    o.set_ranges("/c/s")
    srv = start(sws, o, loc=FORWARD)
    r, st = rget(srv, "/c/s", "bytes=500-")
    assert (r.status, st, r.body) == (206, "MISS", BODY[500:])
    for rng, want in (("bytes=-100", BODY[900:]), ("bytes=700-", BODY[700:]),
                      ("bytes=999-", BODY[999:]), ("bytes=600-5000", BODY[600:]),
                      ("bytes=-500", BODY[500:])):
        r, st = rget(srv, "/c/s", rng)
        assert (r.status, st, r.body) == (206, "HIT", want), rng
        assert r.header("Content-Range") == "bytes %d-999/1000" % (1000 - len(want))
    assert o.count("/c/s") == 1
    r, st = rget(srv, "/c/s", "bytes=-501")        # one byte more than stored
    assert (r.status, st, r.body) == (206, "MISS", BODY[499:])
    assert o.count("/c/s") == 2


def test_a_range_not_held_is_asked_for_by_the_cache(sws, rorigin):
    # no Range passed by the configuration: an origin that answers only the
    # first 100 bytes leaves a part, and the cache then asks for the
    # client's range itself
    o = rorigin()
    o.set_ranges("/c/f", cap=100)
    srv = start(sws, o)
    r, st = rget(srv, "/c/f")
    assert (r.status, st, r.body) == (206, "MISS", BODY[:100])
    r, st = rget(srv, "/c/f", "bytes=20-29")
    assert (r.status, st, r.body) == (206, "HIT", BODY[20:30])
    r, st = rget(srv, "/c/f", "bytes=100-199")
    assert (r.status, st, r.body) == (206, "MISS", BODY[100:200])
    r, st = rget(srv, "/c/f", "bytes=50-149")
    assert (r.status, st, r.body) == (206, "HIT", BODY[50:150])
    assert o.ranges_seen("/c/f") == [None, "bytes=100-199"]
    # several ranges, or no range: the whole is asked for, and replaces the parts
    o.set_ranges("/c/f")
    r, st = rget(srv, "/c/f", "bytes=0-9,500-509")
    assert (r.status, st, r.body) == (200, "MISS", BODY)
    assert o.ranges_seen("/c/f")[-1] is None
    r, st = rget(srv, "/c/f", "bytes=900-909")
    assert (r.status, st, r.body) == (206, "HIT", BODY[900:910])


def test_the_default_is_nginx_s_for_a_range_on_a_miss(sws, rorigin):
    # nothing stored: the whole is asked for (no Range) and stored, and the
    # range is cut from it, as nginx does
    o = rorigin()
    o.set_ranges("/c/d")
    srv = start(sws, o)
    r, st = rget(srv, "/c/d", "bytes=10-19")
    assert (r.status, st, r.body) == (200, "MISS", BODY)      # as it streams
    r, st = rget(srv, "/c/d", "bytes=-5")
    assert (r.status, st, r.body) == (206, "HIT", BODY[-5:])
    assert o.ranges_seen("/c/d") == [None]


def test_another_representation_replaces_the_parts(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/v")
    assert rget(srv, "/c/v", "bytes=0-9")[1] == "HIT"
    other = bytes(reversed(BODY))
    o.set_ranges("/c/v", body=other, etag='"v2"')
    r, st = rget(srv, "/c/v", "bytes=500-599")
    assert (r.status, st, r.body) == (206, "MISS", other[500:600])
    r, st = rget(srv, "/c/v", "bytes=0-9")         # the v1 part went
    assert (r.status, st, r.body) == (206, "MISS", other[:10])
    r, st = rget(srv, "/c/v", "bytes=550-559")
    assert (r.status, st, r.body) == (206, "HIT", other[550:560])
    assert r.header("ETag") == '"v2"'


@pytest.mark.parametrize("etag,extra", [
    ('W/"w1"', ()),                                             # weak: never combined
    (None, ()),                                                 # no validator at all
])
def test_parts_without_a_strong_validator_are_not_combined(sws, rorigin, etag, extra):
    o, srv = with_part(sws, rorigin, "/c/w", etag=etag, extra=extra)
    assert rget(srv, "/c/w", "bytes=0-9")[1] == "HIT"
    assert rget(srv, "/c/w", "bytes=200-299")[1] == "MISS"
    r, st = rget(srv, "/c/w", "bytes=0-9")         # replaced, not joined
    assert (r.status, st, r.body) == (206, "MISS", BODY[:10])


def test_parts_with_the_same_last_modified_are_combined(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/lm", etag=None,
                       extra=[("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")])
    assert rget(srv, "/c/lm", "bytes=200-299")[1] == "MISS"
    r, st = rget(srv, "/c/lm", "bytes=0-9")
    assert (r.status, st, r.body) == (206, "HIT", BODY[:10])


def test_parts_of_variants_are_kept_apart(sws, rorigin):
    o = rorigin()
    o.set_ranges("/c/va", extra=[("Vary", "Accept-Language")])
    srv = start(sws, o, loc=FORWARD)
    fr, de = ["Accept-Language: fr"], ["Accept-Language: de"]
    assert rget(srv, "/c/va", "bytes=0-99", more=fr)[1] == "MISS"
    assert rget(srv, "/c/va", "bytes=0-9", more=de)[1] == "MISS"
    assert rget(srv, "/c/va", "bytes=200-299", more=fr)[1] == "MISS"
    r, st = rget(srv, "/c/va", "bytes=50-59", more=fr)
    assert (r.status, st, r.body) == (206, "HIT", BODY[50:60])
    r, st = rget(srv, "/c/va", "bytes=250-259", more=fr)
    assert (r.status, st, r.body) == (206, "HIT", BODY[250:260])
    assert rget(srv, "/c/va", "bytes=5-9", more=de)[1] == "HIT"
    assert rget(srv, "/c/va", "bytes=50-59", more=de)[1] == "MISS"
    assert o.count("/c/va") == 4


@pytest.mark.parametrize("cr", [
    "bytes 0-99/*",            # no length
    "bytes 0-99/50",           # past its length
    "bytes 50-10/1000",        # backwards
    "items 0-99/1000",         # not bytes
    "bytes 0-49/1000",         # not the body's length
    "",                        # none
])
def test_a_bad_content_range_is_not_stored(sws, rorigin, cr):
    o = rorigin()
    o.set_ranges("/c/b", content_range=cr)
    srv = start(sws, o, loc=FORWARD)
    r, st = rget(srv, "/c/b", "bytes=0-99")
    assert (r.status, st, r.body) == (206, "MISS", BODY[:100])    # passed on as it came
    assert r.header("Content-Range", "") == cr
    r, st = rget(srv, "/c/b", "bytes=0-99")
    assert st == "MISS"
    assert o.count("/c/b") == 2
    assert "a 206 not stored" in srv.error_log()


def test_if_range_on_parts(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/i")
    r, st = rget(srv, "/c/i", "bytes=0-9", more=['If-Range: "v1"'])
    assert (r.status, st, r.body) == (206, "HIT", BODY[:10])
    r, st = rget(srv, "/c/i", "bytes=0-9", more=['If-Range: W/"v1"'])   # weak: no match
    assert (r.status, st, r.body) == (200, "MISS", BODY)
    assert o.count("/c/i") == 2
    r, st = rget(srv, "/c/i", "bytes=0-9", more=['If-Range: "v1"'])    # the whole now
    assert (r.status, st, r.body) == (206, "HIT", BODY[:10])
    r, st = rget(srv, "/c/i", "bytes=0-9", more=['If-Range: "v0"'])
    assert (r.status, st, r.body) == (200, "HIT", BODY)


LM = "Sun, 06 Nov 1994 08:49:37 GMT"


@pytest.mark.parametrize("cond,want", [
    ('If-None-Match: "v1"', 304),
    ('If-None-Match: W/"v1"', 304),                 # weak comparison (RFC 9110 13.1.2)
    ('If-None-Match: "zz", "v1"', 304),             # a list
    ("If-None-Match: *", 304),
    ('If-None-Match: "zz"', 206),                   # no match: the part
    ("If-Modified-Since: " + LM, 304),
    ("If-Modified-Since: Sun, 06 Nov 1994 08:49:36 GMT", 206),   # modified since
    ('If-None-Match: "zz"\nIf-Modified-Since: ' + LM, 206),      # INM decides alone
])
def test_conditions_on_a_part_are_judged_by_its_validators(sws, rorigin, cond, want):
    o, srv = with_part(sws, rorigin, "/c/n", extra=[("Last-Modified", LM)])
    r, st = rget(srv, "/c/n", "bytes=10-19", more=cond.split("\n"))
    assert (r.status, st) == (want, "HIT")
    assert r.body == (BODY[10:20] if want == 206 else b"")
    assert r.header("ETag") == '"v1"' and r.header("Last-Modified") == LM
    assert r.header("Age") is not None
    assert o.count("/c/n") == 1                    # the origin was not asked


def test_a_part_s_304_is_a_whole_entry_s_304(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/n", extra=[("Last-Modified", LM),
                                                    ("Content-Type", "text/x-n")])
    inm = ['If-None-Match: "v1"']
    part, st = rget(srv, "/c/n", "bytes=0-9", more=inm)
    assert (part.status, st) == (304, "HIT")
    o.set_ranges("/c/w", extra=[("Last-Modified", LM), ("Content-Type", "text/x-n")])
    assert rget(srv, "/c/w")[1] == "MISS"          # a whole entry
    whole, st = rget(srv, "/c/w", "bytes=0-9", more=inm)
    assert (whole.status, st) == (304, "HIT")

    def shape(r):
        return sorted((k.lower(), v) for k, v in r.headers
                      if k.lower() not in ("date", "age", "x-origin"))
    assert shape(part) == shape(whole)
    assert part.header("Content-Length") is None and part.header("Content-Range") is None


@pytest.mark.parametrize("rng,cond", [
    ("bytes=200-209", 'If-None-Match: "v1"'),      # a range the parts do not hold
    ("bytes=0-9", 'If-Match: "v1"'),               # the origin's to judge
    ("bytes=0-9", "If-Unmodified-Since: " + LM),
    (None, 'If-None-Match: "v1"'),                 # no range: the whole is not stored
    ("bytes=0-9", 'If-Range: "v0"\nIf-None-Match: "zz"'),   # If-Range fails: the whole
])
def test_conditions_on_a_part_that_go_to_the_origin(sws, rorigin, rng, cond):
    o, srv = with_part(sws, rorigin, "/c/n", extra=[("Last-Modified", LM)])
    r, st = rget(srv, "/c/n", rng, more=cond.split("\n"))
    assert st == "MISS"
    assert o.count("/c/n") >= 2
    assert rget(srv, "/c/n", "bytes=0-9")[1] == "HIT"


def test_conditions_on_a_stale_part_go_to_the_origin(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/ns", cc="max-age=1")
    assert h.wait_for(lambda: rget(srv, "/c/ns", "bytes=0-9",
                                   more=['If-None-Match: "v1"'])[1] == "EXPIRED", timeout=5)
    assert o.count("/c/ns") >= 2


def multipart(r):
    """The parts of a multipart/byteranges body: [(fields, bytes)], and
    its boundary."""
    ctype = r.header("Content-Type")
    m = re.fullmatch(r"multipart/byteranges; boundary=(\d{20})", ctype)
    assert m, ctype
    b = m.group(1).encode()
    body = r.body
    assert body.endswith(b"\r\n--" + b + b"--\r\n")
    parts = []
    for chunk in body[:-len(b) - 8].split(b"\r\n--" + b + b"\r\n")[1:]:
        head, data = chunk.split(b"\r\n\r\n", 1)
        parts.append((head.decode().split("\r\n"), data))
    return parts, b


def test_several_ranges_from_the_parts(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/m", extra=[("Content-Type", "text/x-m")])
    assert rget(srv, "/c/m", "bytes=500-599")[1] == "MISS"
    r, st = rget(srv, "/c/m", "bytes=0-9,520-529,90-99")
    assert (r.status, st) == (206, "HIT")
    parts, _ = multipart(r)
    assert parts == [(["Content-Type: text/x-m", "Content-Range: bytes 0-9/1000"], BODY[:10]),
                     (["Content-Type: text/x-m", "Content-Range: bytes 520-529/1000"],
                      BODY[520:530]),
                     (["Content-Type: text/x-m", "Content-Range: bytes 90-99/1000"],
                      BODY[90:100])]
    assert int(r.header("Content-Length")) == len(r.body)
    assert r.header("Content-Range") is None and r.header("ETag") == '"v1"'
    assert o.count("/c/m") == 2
    # a range the parts do not hold: the whole from the origin, as before
    r, st = rget(srv, "/c/m", "bytes=0-9,200-209")
    assert (r.status, st, r.body) == (200, "MISS", BODY)


def test_several_ranges_with_conditions(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/mc")
    r, st = rget(srv, "/c/mc", "bytes=0-9,20-29", more=['If-None-Match: "v1"'])
    assert (r.status, st, r.body) == (304, "HIT", b"")
    r, st = rget(srv, "/c/mc", "bytes=0-9,20-29", more=['If-None-Match: "v0"'])
    assert (r.status, st) == (206, "HIT")
    assert [d for _, d in multipart(r)[0]] == [BODY[:10], BODY[20:30]]
    r, st = rget(srv, "/c/mc", "bytes=0-9,20-29", more=['If-Range: "v1"'])
    assert (r.status, st) == (206, "HIT")
    assert o.count("/c/mc") == 1


def test_several_ranges_from_parts_as_the_static_module_sends_them(sws, rorigin):
    """The bytes of the multipart from the parts are those the static
    module sends for the same file and ranges, boundaries aside (RFC 9110
    14.6: CRLF before each boundary, the part's Content-Type and
    Content-Range, the closing boundary)."""
    o = rorigin()
    o.set_ranges("/c/f", extra=[("Content-Type", "text/plain")])
    srv = start(sws, o, loc=FORWARD, server="""
        location /s/ { root @TMP@/html; default_type text/plain; }""",
        files={"html/s/f": BODY})
    assert rget(srv, "/c/f", "bytes=0-99")[1] == "MISS"
    assert rget(srv, "/c/f", "bytes=-100")[1] == "MISS"
    for rng in ("bytes=0-9,20-29", "bytes=-5,0-0,950-", "bytes=1-1,99-99,900-999"):
        r, st = rget(srv, "/c/f", rng)
        assert (r.status, st) == (206, "HIT"), rng
        s = h.curl(srv.url("/s/f"), headers=["Range: " + rng])
        assert s.status == 206
        _, b1 = multipart(r)
        _, b2 = multipart(s)
        assert r.body.replace(b1, b"B") == s.body.replace(b2, b"B"), rng
        assert r.header("Content-Length") == s.header("Content-Length")
    assert o.count("/c/f") == 2


def test_head_on_parts_asks_for_the_whole(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/h")
    r, st = rget(srv, "/c/h", method="HEAD")       # a part is not the whole's head
    assert (r.status, st, r.header("Content-Length")) == (200, "MISS", "1000")
    r, st = rget(srv, "/c/h", method="HEAD")
    assert (r.status, st, r.header("Content-Length")) == (200, "HIT", "1000")
    r, st = rget(srv, "/c/h", "bytes=900-")
    assert (r.status, st, r.body) == (206, "HIT", BODY[900:])
    assert o.count("/c/h") == 2


def test_a_stale_part_is_asked_for_again(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/st", cc="max-age=1")
    o.set_ranges("/c/st", cc="max-age=60")
    assert h.wait_for(lambda: rget(srv, "/c/st", "bytes=0-9")[1] == "EXPIRED", timeout=5)
    assert o.ranges_seen("/c/st") == ["bytes=0-99", "bytes=0-9"]
    r, st = rget(srv, "/c/st", "bytes=50-99")      # the stored part, fresh again
    assert (r.status, st, r.body) == (206, "HIT", BODY[50:100])


def test_proxy_cache_partial_off_stores_no_part(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/o", loc=FORWARD + " proxy_cache_partial off;")
    r, st = rget(srv, "/c/o", "bytes=0-9")
    assert (r.status, st, r.body) == (206, "MISS", BODY[:10])
    assert o.count("/c/o") == 2


def test_a_partial_entry_survives_a_restart(sws, rorigin):
    o, srv = with_part(sws, rorigin, "/c/r", "bytes=100-199")
    srv.stop()
    srv.start()
    assert h.wait_for(lambda: "loaded 1 entr" in srv.error_log(), timeout=10), srv.error_log()
    r, st = rget(srv, "/c/r", "bytes=150-159")
    assert (r.status, st, r.body) == (206, "HIT", BODY[150:160])
    assert o.count("/c/r") == 1


def test_a_range_on_a_miss_beside_nginx(tmp_path, rorigin):
    """nginx 1.22 and scalwsd with the same cache configuration: a Range on
    a miss asks the origin for the whole, and the next ranges are hits.
    (The miss itself: nginx cuts the range from the response as it
    streams, scalwsd sends the whole; see compat.md.)"""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    o = rorigin()
    o.set_ranges("/c/n1", extra=[("Accept-Ranges", "bytes")])   # nginx's hits need it
    running = []
    try:
        answers = {}
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            site = """
                proxy_cache_path @DIR@/cache keys_zone=c:1m;
                server {
                    listen 127.0.0.1:@PORT@;
                    location /c/ {
                        proxy_pass http://%s;
                        proxy_cache c;
                        add_header X-Cache $upstream_cache_status;
                    }
                }""" % o.addr
            running.append(start_server(who, d, port, site.replace("@PORT@", str(port))
                                        .replace("@DIR@", str(d))))
            h.make_traversable(tmp_path)
            url = "http://127.0.0.1:%d/c/n1" % port
            assert h.curl(url, headers=["Range: bytes=10-19"]).header("X-Cache") == "MISS"
            got = []
            for rng in ("bytes=-5", "bytes=990-", "bytes=0-0", "bytes=2000-"):
                r = h.curl(url, headers=["Range: " + rng])
                got.append((r.status, r.header("X-Cache"), r.header("Content-Range"),
                            r.body if r.status == 206 else b""))
            answers[who] = got
        assert answers["scalwsd"] == answers["nginx"]
        assert [g[:2] for g in answers["nginx"]] == [(206, "HIT")] * 3 + [(416, "HIT")]
        assert o.ranges_seen("/c/n1") == [None, None]     # one whole each
    finally:
        for s in running:
            s.stop()


PHP_PARTS = b"""<?php
$body = "the php body\\n";
$rng = $_SERVER['HTTP_RANGE'] ?? '';
file_put_contents(__DIR__ . '/seen.log', "$rng\\n", FILE_APPEND | LOCK_EX);
header('ETag: "v1"');
header('Cache-Control: max-age=600');
if ($rng === '') {
    $a = 0; $b = 4;                  /* only the first five bytes, as a 206 */
} elseif (preg_match('/^bytes=(\\d+)-(\\d+)$/', $rng, $m)) {
    $a = (int) $m[1]; $b = min((int) $m[2], 12);
} else {
    echo $body;
    exit;
}
http_response_code(206);
header("Content-Range: bytes $a-$b/13");
header('Content-Length: ' . ($b - $a + 1));
echo substr($body, $a, $b - $a + 1);
"""


def test_fastcgi_parts_and_the_range_passed_as_a_param(sws, tmp_path):
    """fastcgi_cache: the cache's Range goes to the application as
    HTTP_RANGE (the CGI-style parameters), and its 206s are combined."""
    import phpfpm
    from cacheorigin import LOG_FORMAT
    fpm = phpfpm.PhpFpm(tmp_path / "fpm", children=2).start()
    try:
        srv = sws(http="fastcgi_cache_path @TMP@/fcache keys_zone=f:1m;\n" + LOG_FORMAT,
                  server="""
            location ~ \\.php$ {
                root @TMP@/html;
                include %s/conf/fastcgi.conf;
                fastcgi_pass unix:%s;
                fastcgi_cache f;
                access_log @TMP@/cache.log cachelog;
            }""" % (h.SRC, fpm.sock), files={"html/p.php": PHP_PARTS})
        r, st = get(srv, "/p.php")
        assert (r.status, st, r.body) == (206, "MISS", b"the p")
        r, st = get(srv, "/p.php", headers=["Range: bytes=1-3"])
        assert (r.status, st, r.body) == (206, "HIT", b"he ")
        r, st = get(srv, "/p.php", headers=["Range: bytes=5-12"])
        assert (r.status, st, r.body) == (206, "MISS", b"hp body\n")
        r, st = get(srv, "/p.php")                 # the parts hold the whole
        assert (r.status, st, r.body) == (200, "HIT", b"the php body\n")
        seen = (srv.tmp / "html" / "seen.log").read_text().splitlines()
        assert seen == ["", "bytes=5-12"]
    finally:
        fpm.stop()
