"""fastcgi_cache against a real PHP-FPM (tests/integration/phpfpm.py): the
FastCGI module asks the framework what a cached request sends
(sws_http_upstream_cache_request), so that a miss passes none of the
client's conditional or range fields as HTTP_* params but If-None-Match, and a revalidation
sends the entry's validators as HTTP_IF_NONE_MATCH / HTTP_IF_MODIFIED_SINCE,
which the script answers with a 304; and a fresh hit is answered before the
module makes its request (sws_http_upstream_cache_hit)."""
import time

import pytest

import phpfpm
import swsharness as h

# What the script saw of the conditionals, one line per request; 304 when
# the ETag it sends is in If-None-Match.
SCRIPT = b"""<?php
$inm = $_SERVER['HTTP_IF_NONE_MATCH'] ?? '';
$ims = $_SERVER['HTTP_IF_MODIFIED_SINCE'] ?? '';
$rng = $_SERVER['HTTP_RANGE'] ?? '';
$ifr = $_SERVER['HTTP_IF_RANGE'] ?? '';
file_put_contents(__DIR__ . '/seen.log', "$inm|$ims|$rng|$ifr\\n", FILE_APPEND | LOCK_EX);
header('ETag: "v1"');
header('Last-Modified: Wed, 01 Jan 2025 00:00:00 GMT');
header('Cache-Control: max-age=' . ($_GET['age'] ?? '600'));
header('X-Php: yes');
if ($inm === '"v1"') {
    http_response_code(304);
    exit;
}
echo "the php body\\n";
"""
BODY = b"the php body\n"
LM = "Wed, 01 Jan 2025 00:00:00 GMT"


@pytest.fixture
def fpm(tmp_path):
    f = phpfpm.PhpFpm(tmp_path / "fpm", children=2).start()
    yield f
    f.stop()


def server(sws, fpm, extra=""):
    return sws(http="""
        fastcgi_cache_path @TMP@/fcache keys_zone=f:1m mem_size=1m;
        log_format fc '$request_uri $upstream_cache_status $http_x_tag';
    """, server="""
        location ~ \\.php$ {
            root @TMP@/html;
            include %s/conf/fastcgi.conf;
            fastcgi_pass unix:%s;
            fastcgi_cache f;
            access_log @TMP@/fc.log fc;
            %s
        }
    """ % (h.SRC, fpm.sock, extra), files={"html/c.php": SCRIPT})


def seen(srv):
    try:
        return (srv.tmp / "html" / "seen.log").read_text().splitlines()
    except OSError:
        return []


_n = [0]


def get(srv, path, headers=(), method="GET"):
    _n[0] += 1
    tag = "f%d" % _n[0]
    r = h.curl(srv.url(path), method=method, headers=list(headers) + ["X-Tag: " + tag])

    def line():
        try:
            lines = (srv.tmp / "fc.log").read_text().splitlines()
        except OSError:
            return None
        return next((x.split(" ") for x in lines if x.endswith(" " + tag)), None)
    assert h.wait_for(lambda: line() is not None, timeout=5)
    return r, line()[1]


def test_a_miss_passes_only_if_none_match_and_the_hit_needs_no_php(sws, fpm):
    srv = server(sws, fpm)
    r, st = get(srv, "/c.php", headers=['If-None-Match: "v1"', "Range: bytes=0-2",
                                        "If-Range: \"v1\""])
    # PHP saw the client's If-None-Match alone (RFC 9111 4.3.1) and answered
    # 304, which the client got and the cache did not store
    assert st == "MISS" and r.status == 304, (r.status, r.body)
    assert seen(srv) == ['"v1"|||']
    r, st = get(srv, "/c.php", headers=["Range: bytes=0-2"])
    assert st == "MISS" and r.body == BODY
    assert seen(srv)[-1] == "|||"                   # PHP answered in full: stored
    r, st = get(srv, "/c.php")
    assert st == "HIT" and r.status == 200 and r.body == BODY
    assert r.header("X-Php") == "yes" and r.header("Age") is not None
    # the client's own conditionals and ranges are judged on the entry
    r, st = get(srv, "/c.php", headers=['If-None-Match: "v1"'])
    assert st == "HIT" and r.status == 304
    r, st = get(srv, "/c.php", headers=["Range: bytes=4-6"])
    assert st == "HIT" and r.status == 206 and r.body == b"php"
    assert len(seen(srv)) == 2                       # PHP was asked twice


def test_a_head_miss_stays_a_head_and_stores_nothing(sws, fpm):
    # proxy_cache_convert_head is proxy's: FastCGI's method is the
    # REQUEST_METHOD parameter, and a body-less answer is never the entry
    srv = server(sws, fpm)
    r, st = get(srv, "/c.php", method="HEAD")
    assert (r.status, st, r.body) == (200, "MISS", b"")
    r, st = get(srv, "/c.php")
    assert (st, r.body) == ("MISS", BODY)
    r, st = get(srv, "/c.php")
    assert (st, r.body) == ("HIT", BODY)


def test_revalidation_sends_the_validators_as_params(sws, fpm):
    srv = server(sws, fpm, "fastcgi_cache_revalidate on;")
    r, st = get(srv, "/c.php?age=1")
    assert st == "MISS" and r.body == BODY
    time.sleep(2.1)                    # max-age=1 in whole seconds: stale now
    r, st = get(srv, "/c.php?age=1", headers=['If-None-Match: "other"'])
    assert st == "REVALIDATED" and r.status == 200 and r.body == BODY, (st, r.status)
    # the cache's validators, not the client's
    assert seen(srv) == ["|||", '"v1"|%s||' % LM]
    r, st = get(srv, "/c.php?age=1")
    assert st == "HIT" and r.body == BODY


def test_without_revalidate_an_expired_entry_is_fetched_whole(sws, fpm):
    srv = server(sws, fpm, "fastcgi_cache_revalidate off;")
    get(srv, "/c.php?age=1")
    time.sleep(2.1)
    r, st = get(srv, "/c.php?age=1")
    assert st == "EXPIRED" and r.status == 200 and r.body == BODY
    assert seen(srv) == ["|||", "|||"]
    # the client's If-None-Match goes to PHP, whose 304 is the client's
    time.sleep(1.1)
    r, st = get(srv, "/c.php?age=1", headers=['If-None-Match: "v1"'])
    assert st == "EXPIRED" and r.status == 304
    assert seen(srv)[-1] == '"v1"|||'


def test_fastcgi_without_a_cache_passes_the_client_conditionals(sws, fpm):
    # the same location without fastcgi_cache: nothing is dropped
    srv = sws(server="""
        location ~ \\.php$ {
            root @TMP@/html;
            include %s/conf/fastcgi.conf;
            fastcgi_pass unix:%s;
        }
    """ % (h.SRC, fpm.sock), files={"html/c.php": SCRIPT})
    r = h.curl(srv.url("/c.php"), headers=['If-None-Match: "v1"', "Range: bytes=0-2"])
    assert r.status == 304
    assert seen(srv) == ['"v1"||bytes=0-2|']
