"""$upstream_http_NAME: the response headers as the upstream sent them,
through an access_log format against the scripted origin."""
import swsharness as h


FMT = ('log_format uh "$uri|$upstream_http_x_origin|$upstream_http_server|'
       '$upstream_http_content_length|$upstream_http_transfer_encoding|'
       '$upstream_http_set_cookie|$upstream_http_x_hop|$upstream_http_location|'
       '$upstream_http_x_missing|$sent_http_location";')


def lines(srv, n):
    h.wait_for(lambda: len([ln for ln in srv.access_log().splitlines() if ln]) >= n, 3)
    out = [ln.split("|") for ln in srv.access_log().splitlines() if ln]
    assert len(out) == n, out
    return out


def start(sws, o, extra="", http=""):
    return sws(http=FMT + http, access_log="off",
               server="access_log @TMP@/access.log uh; %s "
                      "location / { proxy_pass http://%s; }" % (extra, o.addr))


def test_headers_as_received(sws, origin):
    o = origin("one")
    srv = start(sws, o)
    r = h.curl(srv.url("/headers"))
    assert r.status == 200
    assert r.header("Server").startswith("scalws")        # hidden from the client ...
    (ln,) = lines(srv, 1)
    assert ln[0] == "/headers"
    assert ln[1] == "one"
    assert ln[2] == "origin-server"                       # ... but in the variable
    assert ln[3] == str(len(b"headers\n"))                # framing headers too
    assert ln[4] == "-"
    assert ln[5] == "a=1, b=2"                            # several: joined
    assert ln[6] == "secret"                              # named by Connection
    assert ln[8] == "-"                                   # absent


def test_chunked_and_location_before_rewrite(sws, origin):
    o = origin()
    srv = start(sws, o)
    assert h.curl(srv.url("/chunked/100")).status == 200
    r = h.curl(srv.url("/redirect"))
    assert r.status == 302
    l1, l2 = lines(srv, 2)
    assert l1[3] == "-" and l1[4] == "chunked"
    # the origin's Location as sent; the client's is rewritten (proxy_redirect)
    assert l2[7] == "http://%s/two/x?y=1" % o.addr
    # ... and made absolute (absolute_redirect, as nginx)
    assert l2[9] == "http://127.0.0.1:%d/two/x?y=1" % srv.port


def test_not_proxied_and_unreachable(sws, origin):
    o = origin()
    port = h.free_port()
    srv = sws(http=FMT, access_log="off",
              server="access_log @TMP@/access.log uh; "
                     "location /dead { proxy_pass http://127.0.0.1:%d; } "
                     "location / { proxy_pass http://%s; }" % (port, o.addr))
    assert h.curl(srv.url("/respond")).status == 200
    assert h.curl(srv.url("/dead")).status == 502
    out = lines(srv, 2)
    for ln in out:
        assert ln[1:9] == ["-"] * 8, ln


def test_retry_keeps_only_last_response(sws, origin):
    bad, good = origin("bad"), origin("good")
    bad.fail = 503
    srv = sws(http=FMT + "upstream g { server %s max_fails=0; server %s; }"
              % (bad.addr, good.addr), access_log="off",
              server="access_log @TMP@/access.log uh; location / { "
                     "proxy_next_upstream error http_503; proxy_pass http://g; }")
    got = set()
    for _ in range(2):
        r = h.curl(srv.url("/name"))
        assert r.status == 200 and r.body == b"good"
    for ln in lines(srv, 2):
        got.add(ln[1])
    assert got == {"good"}                                # not "bad, good"


def test_json_escape_and_in_set_header(sws, origin):
    """The variable in another format (JSON escaping) and in the hash key
    of an upstream (evaluated before any response: empty)."""
    o = origin("x\"y")
    srv = sws(http='log_format j escape=json "{\\"o\\":\\"$upstream_http_x_origin\\"}";'
                   "upstream g { hash $upstream_http_x_origin; server %s; }" % o.addr,
              access_log="off",
              server="access_log @TMP@/access.log j; location / { proxy_pass http://g; }")
    assert h.curl(srv.url("/name")).status == 200
    h.wait_for(lambda: srv.access_log().strip() != "", 3)
    assert srv.access_log().strip() == '{"o":"x\\"y"}'


def test_invalid_name_rejected(tmp_path):
    rc, out, listening = h.start_expect_failure(
        tmp_path, http='log_format x "$upstream_http_";', server="")
    assert rc not in (None, 0) and not listening
    assert 'unknown variable "$upstream_http_"' in out
