"""$limit_rate written by rewrite's set and declared by a map paces the
response, as nginx's "set $limit_rate 1k" does (and map ... $limit_rate,
which nginx accepts but does not apply: see docs/compat.md).

As in test_limit_rate.py, timing is only checked against generous bounds:
a paced response cannot be faster than its rate allows, and an unpaced one
is not slowed to anything like it."""
import os
import time

import pytest

import swsharness as h

BODY = os.urandom(100 * 1024)

HTTP = """
    map $arg_speed $limit_rate { default 0; slow 20k; bad lots; }
    log_format lrs '$request_uri $status rate=$limit_rate';
    access_log @TMP@/lrs.log lrs;
"""

SERVER = """
        location /set/ { alias @TMP@/html/; set $limit_rate 20k; }
        location /setif/ {
            alias @TMP@/html/;
            if ($arg_slow) { set $limit_rate 20k; }
        }
        location /setbad/ { alias @TMP@/html/; set $limit_rate "many"; }
        location /setoff/ { alias @TMP@/html/; limit_rate 20k; set $limit_rate 0; }
        location /map/ { alias @TMP@/html/; }
        location /show { set $limit_rate 3k; return 200 "rate=$limit_rate"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(http=HTTP, server=SERVER, files={"html/b.bin": BODY})


def timed(path, srv):
    t = time.monotonic()
    r = h.curl(srv.url(path))
    took = time.monotonic() - t
    assert r.status == 200 and r.body == BODY, (path, r)
    return took


def test_set_paces(srv):
    # 20 KB/s, a second's worth at once: 100 KB cannot take less than 4 s
    assert timed("/set/b.bin", srv) >= 3.0


def test_set_in_if_paces_only_when_true(srv):
    assert timed("/setif/b.bin", srv) < 2.5
    assert timed("/setif/b.bin?slow=1", srv) >= 3.0


def test_map_paces(srv):
    assert timed("/map/b.bin", srv) < 2.5
    assert timed("/map/b.bin?speed=slow", srv) >= 3.0
    assert h.wait_for(lambda: "/map/b.bin?speed=slow 200 rate=20480"
                      in h._read(srv.tmp / "lrs.log")), h._read(srv.tmp / "lrs.log")


def test_invalid_values_do_not_limit(srv):
    assert timed("/setbad/b.bin", srv) < 2.5
    assert h.wait_for(lambda: 'invalid $limit_rate "many": not changed' in srv.error_log())
    assert timed("/map/b.bin?speed=bad", srv) < 2.5
    assert h.wait_for(lambda: 'invalid $limit_rate "lots": not limited' in srv.error_log())


def test_set_zero_lifts_the_location_limit(srv):
    assert timed("/setoff/b.bin", srv) < 2.5


def test_the_variable_reads_what_set_wrote(srv):
    r = h.curl(srv.url("/show"))
    assert r.status == 200 and r.body == b"rate=3072", r
