"""Targeted Cache-Control (RFC 9213): CDN-Cache-Control (or the fields of
proxy_cache_targeted_fields, first first) decides for this cache instead of
Cache-Control and Expires, read as a Structured Field Dictionary (RFC
8941: one that does not parse is as if absent); Cache-Control still goes
to the client, and the targeted field too unless proxy_cache_targeted_hide
is on. Against a real origin (cacheorigin.py) that sends exactly the
fields each test chose."""
import pytest

import swsharness as h
from cacheorigin import corigin, get, start  # noqa: F401

PAST = "Thu, 01 Jan 1970 00:00:01 GMT"


def twice(srv, path, **kw):
    return get(srv, path, **kw)[1], get(srv, path, **kw)[1]


def fields(cc=None, cdn=None, *more):
    out = []
    if cc is not None:
        out.append(("Cache-Control", cc))
    if cdn is not None:
        out.append(("CDN-Cache-Control", cdn))
    return out + list(more)


@pytest.mark.parametrize("cc_value,cdn,expect", [
    # the targeted field decides, whatever Cache-Control says
    ("no-store", "max-age=60", ("MISS", "HIT")),
    ("private", "max-age=60", ("MISS", "HIT")),
    ("max-age=60", "no-store", ("MISS", "MISS")),
    ("max-age=60", "private", ("MISS", "MISS")),
    ("max-age=60", "max-age=0", ("MISS", "MISS")),
    # RFC 9213's own example: "none" is a valid field with nothing in it
    # for freshness; Cache-Control's no-store does not count (nothing
    # else gives a lifetime here: not stored either way)
    ("max-age=60", "none", ("MISS", "MISS")),
    # a value of a type the directive cannot have is not used (2.2)
    ("max-age=60", "max-age=60.5", ("MISS", "MISS")),
    ("max-age=60", 'max-age="60"', ("MISS", "MISS")),
    ("max-age=60", "max-age=60, no-store=?0", ("MISS", "HIT")),
    # of two members of one key, the last one (RFC 8941 Dictionary)
    ("no-store", "max-age=0, max-age=60", ("MISS", "HIT")),
    # one that does not parse is as if absent: Cache-Control decides
    ("max-age=60", "no-store,", ("MISS", "HIT")),
    ("max-age=60", "No-Store", ("MISS", "HIT")),
    ("max-age=60", "no-store max-age=1", ("MISS", "HIT")),
    ("max-age=60", 'no-cache="a', ("MISS", "HIT")),
    ("no-store", "max-age=60;", ("MISS", "MISS")),
    ("no-store", "", ("MISS", "MISS")),
])
def test_cdn_cache_control_takes_precedence(sws, corigin, cc_value, cdn, expect):
    o = corigin()
    o.set("/c/t", body=b"t", headers=fields(cc_value, cdn))
    srv = start(sws, o)
    assert twice(srv, "/c/t") == expect


def test_parameters_and_other_types_are_ignored(sws, corigin):
    o = corigin()
    o.set("/c/p", body=b"p", headers=fields(
        "no-store", 'max-age=60;x=1, ext=(1 "two" three);y, blob=:AAE=:, other=?0'))
    srv = start(sws, o)
    assert twice(srv, "/c/p") == ("MISS", "HIT")


def test_expires_does_not_count_beside_a_targeted_field(sws, corigin):
    o = corigin()
    o.set("/c/e", body=b"e", headers=fields(None, "max-age=60", ("Expires", PAST)))
    o.set("/c/e2", body=b"e", headers=fields(None, "public", ("Expires", PAST)))
    srv = start(sws, o, loc="proxy_cache_valid 200 1m;")
    assert twice(srv, "/c/e") == ("MISS", "HIT")
    # no lifetime in the targeted field: proxy_cache_valid, not Expires
    assert twice(srv, "/c/e2") == ("MISS", "HIT")


def test_both_fields_go_to_the_client_by_default(sws, corigin):
    o = corigin()
    o.set("/c/f", body=b"f", headers=fields("no-store", "max-age=60"))
    srv = start(sws, o)
    for want in ("MISS", "HIT"):
        r, st = get(srv, "/c/f")
        assert st == want
        assert r.header("Cache-Control") == "no-store"
        assert r.header("CDN-Cache-Control") == "max-age=60"


def test_targeted_hide_keeps_the_field_from_the_client(sws, corigin):
    o = corigin()
    o.set("/c/g", body=b"g", headers=fields("no-store", "max-age=60", ("X-Kept", "1")))
    o.set("/c/g304", body=b"g", headers=fields("max-age=0", "max-age=1",
                                               ("ETag", '"g"')))
    srv = start(sws, o, loc="proxy_cache_targeted_hide on;")
    for want in ("MISS", "HIT"):
        r, st = get(srv, "/c/g")
        assert (st, r.body) == (want, b"g")
        assert r.header("CDN-Cache-Control") is None
        assert r.header("Cache-Control") == "no-store" and r.header("X-Kept") == "1"
    # a revalidation's answer from the entry neither
    assert get(srv, "/c/g304")[1] == "MISS"
    r, st = get(srv, "/c/g304", headers=["Cache-Control: no-cache"])
    assert st == "REVALIDATED" and r.header("CDN-Cache-Control") is None
    assert r.header("Cache-Control") == "max-age=0"


def test_the_target_list_first_first(sws, corigin):
    o = corigin()
    mine = [("Scalws-Cache-Control", "no-store")]
    o.set("/c/l1", body=b"1", headers=fields("no-store", "max-age=60", *mine))
    o.set("/c/l2", body=b"2", headers=fields("no-store", "no-store",
                                             ("Scalws-Cache-Control", "max-age=60")))
    # the first one does not parse: the next one decides
    o.set("/c/l3", body=b"3", headers=fields("no-store", "max-age=60",
                                             ("Scalws-Cache-Control", "max-age=x y")))
    # only the second one there
    o.set("/c/l4", body=b"4", headers=fields("no-store", "max-age=60"))
    srv = start(sws, o, loc="proxy_cache_targeted_fields Scalws-Cache-Control "
                            "CDN-Cache-Control;")
    assert twice(srv, "/c/l1") == ("MISS", "MISS")
    assert twice(srv, "/c/l2") == ("MISS", "HIT")
    assert twice(srv, "/c/l3") == ("MISS", "HIT")
    assert twice(srv, "/c/l4") == ("MISS", "HIT")


def test_targeted_fields_off_is_cache_control_alone(sws, corigin):
    o = corigin()
    o.set("/c/o1", body=b"1", headers=fields("no-store", "max-age=60"))
    o.set("/c/o2", body=b"2", headers=fields("max-age=60", "no-store"))
    srv = start(sws, o, loc="proxy_cache_targeted_fields off;")
    assert twice(srv, "/c/o1") == ("MISS", "MISS")
    assert twice(srv, "/c/o2") == ("MISS", "HIT")


def test_several_lines_are_one_dictionary(sws, corigin):
    o = corigin()
    o.set("/c/m", body=b"m", headers=[("Cache-Control", "no-store"),
                                      ("CDN-Cache-Control", "max-age=0"),
                                      ("CDN-Cache-Control", "max-age=60")])
    srv = start(sws, o)
    assert twice(srv, "/c/m") == ("MISS", "HIT")


def test_no_cache_with_field_names_stores_without_them(sws, corigin):
    o = corigin()
    o.set("/c/n", body=b"n", headers=fields(
        "no-store", 'max-age=60, no-cache="Set-Cookie, X-Secret"',
        ("Set-Cookie", "a=1"), ("X-Secret", "s"), ("X-Kept", "k")))
    srv = start(sws, o)
    r, st = get(srv, "/c/n")
    assert st == "MISS" and r.header("Set-Cookie") == "a=1"
    r, st = get(srv, "/c/n")
    assert st == "HIT"
    assert r.header("Set-Cookie") is None and r.header("X-Secret") is None
    assert r.header("X-Kept") == "k"


def test_fastcgi_and_other_prefixes_have_the_directives(sws):
    srv = sws(http="fastcgi_cache_path @TMP@/f keys_zone=f:1m;", server="""
        location /a { fastcgi_cache f;
                      fastcgi_cache_targeted_fields X-Mine-Cache-Control cdn-cache-control;
                      fastcgi_cache_targeted_hide on; }
        location /b { uwsgi_cache_targeted_fields off; scgi_cache_targeted_hide off; }
        location /up { return 200 "up"; }
    """)
    assert h.curl(srv.url("/up")).body == b"up"


def test_targeted_directive_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { location / { proxy_cache_targeted_fields off CDN-Cache-Control; } }",
         "not a targeted field"),
        ("server { location / { proxy_cache_targeted_fields Cache-Control; } }",
         "not a targeted field"),
        ("server { location / { proxy_cache_targeted_fields a(b); } }", "not a targeted field"),
        ("server { location / { proxy_cache_targeted_fields a; proxy_cache_targeted_fields b; } }",
         "duplicate"),
        ("server { location / { proxy_cache_targeted_hide yes; } }", "proxy_cache_targeted_hide"),
    ])
