"""The shared memory zones of a configuration, listed and inspected through
the SDK (sws_shm_zone_count, _get, _find, _info and the slab's classes) by
tests/modules/tzones.c behind a location: the keyed zones of limit_req and
limit_conn with their owners and pages, records that fill pages, and what a
reload keeps (the same name and size) or starts afresh (another size)."""
import signal
from pathlib import Path

import pytest

import swsharness as h

TZONES_SRC = Path(h.SRC) / "tests" / "modules" / "tzones.c"

HTTP = """
    limit_req_zone $arg_k zone=one:64k rate=1r/m;
    limit_conn_zone $arg_k zone=one:128k;
    limit_req_zone $arg_k zone=other:@SIZE@ rate=1r/m;
"""

SERVER = """
        location = /zones { tzones; }
        location = /req { limit_req zone=one burst=1000 nodelay; limit_req zone=other;
                          respond 200 "ok"; }
        location = /conn { limit_conn one 5; respond 200 "ok"; }
        location = /ver { respond 200 "v1"; }
"""


@pytest.fixture(scope="module")
def tzones(tmp_path_factory):
    so = h.build_module(tmp_path_factory.mktemp("tzones"), "tzones", TZONES_SRC.read_text())
    return "load_module %s;" % so


def start(sws, tzones, size="64k"):
    return sws(load=tzones, workers=2, http=HTTP.replace("@SIZE@", size), server=SERVER)


def zones(srv, name=None):
    """{name: (size, owner, pages, used, free, [(class, used, total)])}"""
    r = h.curl(srv.url("/zones" + ("?name=" + name if name else "")), fresh=True)
    assert r.status == 200, r
    out, last = {}, None
    for line in r.body.decode().splitlines():
        f = line.split()
        if f[0] == "-":
            out[last][5].append(tuple(int(x) for x in f[1:]))
        else:
            last = f[0]
            out[last] = (int(f[1]), f[2], int(f[3]), int(f[4]), int(f[5]), [])
    return out


def test_zones_listed_with_owner_and_pages(sws, tzones):
    srv = start(sws, tzones)
    z = zones(srv)
    # the two modules' zones named "one" are two zones, each its module's
    assert z["limit_req:one"][:2] == (65536, "limit_req"), z
    assert z["limit_conn:one"][:2] == (131072, "limit_conn"), z
    assert z["limit_req:other"][:2] == (65536, "limit_req"), z
    for name in ("limit_req:one", "limit_conn:one"):
        size, owner, pages, used, free, classes = z[name]
        assert pages > 0 and used + free == pages and used > 0, z[name]
        assert classes, z[name]                   # the zone's root is in a class
    # a zone of the core without a slab: its size and no pages
    core = [v for v in z.values() if v[1] == "core"]
    assert core and all(v[2:5] == (0, 0, 0) for v in core), z


def test_zone_found_by_name(sws, tzones):
    srv = start(sws, tzones)
    assert list(zones(srv, "limit_conn:one")) == ["limit_conn:one"]
    r = h.curl(srv.url("/zones?name=one"), fresh=True)
    assert r.status == 404, r                     # the SDK's names are prefixed
    r = h.curl(srv.url("/zones?name=limit_req:nosuch"), fresh=True)
    assert r.status == 404, r


def records(z, name):
    return sum(u for _, u, _ in z[name][5])


def test_records_fill_the_zone_and_survive_a_reload(sws, tzones):
    srv = start(sws, tzones)
    before = zones(srv)
    for i in range(300):
        assert h.curl(srv.url("/req?k=client-%d" % i), fresh=True).status == 200
    after = zones(srv)
    # 300 records in each of the request zones: more chunks, more pages
    assert records(after, "limit_req:one") >= records(before, "limit_req:one") + 300
    assert after["limit_req:one"][3] > before["limit_req:one"][3], (before, after)
    # limit_conn's records go when their requests end
    assert h.curl(srv.url("/conn?k=x"), fresh=True).status == 200
    assert h.wait_for(lambda: records(zones(srv), "limit_conn:one")
                      == records(before, "limit_conn:one")), zones(srv)

    # a reload with the same names and sizes keeps every record; the zone
    # whose size changes starts afresh
    srv.write_conf(srv.conf_text.replace('respond 200 "v1"', 'respond 200 "v2"')
                   .replace("zone=other:64k", "zone=other:128k"))
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: h.curl(srv.url("/ver"), fresh=True).body == b"v2", 10), \
        srv.error_log()
    # (a worker of the old generation may still answer for a moment)
    assert h.wait_for(lambda: zones(srv)["limit_req:other"][0] == 131072, 10), zones(srv)
    reloaded = zones(srv)
    assert records(reloaded, "limit_req:one") == records(after, "limit_req:one"), reloaded
    assert records(reloaded, "limit_req:other") < 300, reloaded
    # and the records kept still count: the other zone's key was forgotten,
    # the kept one's excess is there (burst 1000: passes, but is counted)
    assert h.curl(srv.url("/req?k=client-1"), fresh=True).status == 200
