"""ignore_invalid_headers and underscores_in_headers, as nginx: by default
a request field whose name has a character other than letters, digits and
'-' is dropped (logged at info), so that "Zz_Real" cannot pose as
Zz-Real where names meet with '-' and '_' made equal (FastCGI's HTTP_*
parameters, an application's CGI-style environment); underscores_in_headers
on keeps names with '_', ignore_invalid_headers off keeps every valid field
name. The server behind the proxy shows what was kept. HTTP/1 and HTTP/2
alike."""
import pytest

import swsharness as h


def start(sws, origin, extra=""):
    o = origin()
    srv = sws(server="""
        listen 127.0.0.1:@PORT2@ http2;
        %s
        location / { proxy_pass http://%s; }
    """ % (extra, o.addr), ports=2, loglevel="info")
    return o, srv


def seen(o, srv, *fields, http2=False):
    if http2:
        r = h.curl("http://127.0.0.1:%d/echo" % srv.ports[1], headers=list(fields),
                   prior_knowledge=True)
        assert r.http_version == 3          # pycurl's HTTP/2
    else:
        r = h.exchange(srv.port, h.request("GET", "/echo", headers=list(fields)))
    assert r is not None and r.status == 200
    q = o.last()
    return sorted(n.lower() for n, _ in q.headers if n.lower().startswith("zz"))


@pytest.mark.parametrize("http2", [False, True], ids=["h1", "h2"])
def test_underscored_and_odd_names_are_dropped_by_default(sws, origin, http2):
    o, srv = start(sws, origin)
    assert seen(o, srv, "Zz-Real: 10.0.0.1", http2=http2) == ["zz-real"]
    assert seen(o, srv, "Zz_Real: 6.6.6.6", "Zz-Real: 10.0.0.2", "Zz.Dot: d",
                http2=http2) == ["zz-real"]
    assert o.last().header("Zz-Real") == "10.0.0.2"
    assert h.wait_for(lambda: 'invalid header: "zz_real", ignored' in srv.error_log(),
                      timeout=3)


@pytest.mark.parametrize("http2", [False, True], ids=["h1", "h2"])
def test_underscores_in_headers_on(sws, origin, http2):
    o, srv = start(sws, origin, "underscores_in_headers on;")
    assert seen(o, srv, "Zz_Real: 6.6.6.6", "Zz.Dot: d", http2=http2) == ["zz_real"]


def test_ignore_invalid_headers_off(sws, origin):
    o, srv = start(sws, origin, "ignore_invalid_headers off;")
    assert seen(o, srv, "Zz_Real: 6.6.6.6", "Zz.Dot: d") == ["zz.dot", "zz_real"]
