"""realip: the client address from a trusted proxy's header, as the access
log, limit keys and proxy's X-Forwarded-For see it."""
import pytest

import swsharness as h

HTTP = """
    log_format rip '$request_uri $remote_addr $remote_port $realip_remote_addr '
                   '$realip_remote_port';
    access_log @TMP@/rip.log rip;
    limit_req_zone $binary_remote_addr zone=ip:64k rate=1r/m;
"""

SERVERS = """
    server {
        listen 127.0.0.1:@PORT2@;
        set_real_ip_from 127.0.0.0/8;
        set_real_ip_from 10.0.0.0/8;
        set_real_ip_from 2001:db8::/32;
        real_ip_header X-Forwarded-For;
        location / { respond 200 "xff"; }
        location /lim/ { limit_req zone=ip; respond 200 "lim"; }
        location /xreal/ { real_ip_header X-Real-IP; respond 200 "xreal"; }
        location /custom/ { real_ip_header CF-Connecting-IP; respond 200 "custom"; }
    }
    server {
        listen 127.0.0.1:@PORT3@;
        set_real_ip_from 192.0.2.0/24;              # not us: nothing changes
        location / { respond 200 "untrusted"; }
        location /loc/ { set_real_ip_from 127.0.0.1; respond 200 "loc"; }
        # the server's settings changed nothing: the location's apply
        location /rec/ { set_real_ip_from 127.0.0.1; set_real_ip_from 10.0.0.0/8;
                         real_ip_header X-Forwarded-For; real_ip_recursive on;
                         respond 200 "rec"; }
    }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(ports=3, http=HTTP, servers=SERVERS)


def ask(srv, path, headers=(), port=None):
    return h.curl(srv.url(path, port=port or srv.ports[1]), headers=list(headers), fresh=True)


def logged(srv, path):
    text = lambda: h._read(srv.tmp / "rip.log")
    assert h.wait_for(lambda: path + " " in text()), text()
    return [ln for ln in text().splitlines() if ln.startswith(path + " ")][-1].split()


def test_xff_last_entry(srv):
    assert ask(srv, "/a", ["X-Forwarded-For: 203.0.113.5"]).status == 200
    f = logged(srv, "/a")
    assert f[1] == "203.0.113.5" and f[3] == "127.0.0.1" and f[4].isdigit(), f
    # not recursive: the last entry, trusted or not
    ask(srv, "/b", ["X-Forwarded-For: 203.0.113.5, 10.1.2.3"])
    assert logged(srv, "/b")[1] == "10.1.2.3"


def test_xff_recursive(srv):
    p3 = srv.ports[2]
    ask(srv, "/rec/1", ["X-Forwarded-For: 198.51.100.1, 203.0.113.5, 10.1.2.3, 10.9.9.9"],
        port=p3)
    assert logged(srv, "/rec/1")[1] == "203.0.113.5"
    # all trusted: the leftmost
    ask(srv, "/rec/2", ["X-Forwarded-For: 10.0.0.1,10.0.0.2"], port=p3)
    assert logged(srv, "/rec/2")[1] == "10.0.0.1"
    # several fields are one list
    ask(srv, "/rec/3", ["X-Forwarded-For: 198.51.100.7", "X-Forwarded-For: 10.0.0.3"],
        port=p3)
    assert logged(srv, "/rec/3")[1] == "198.51.100.7"
    # a bad entry on the way: what was found before it stands
    ask(srv, "/rec/4", ["X-Forwarded-For: 198.51.100.7, bogus, 10.0.0.4"], port=p3)
    assert logged(srv, "/rec/4")[1] == "10.0.0.4"


def test_ipv6_and_ports(srv):
    ask(srv, "/xreal/1", ["X-Real-IP: [2001:db8::7]:8443"])
    f = logged(srv, "/xreal/1")
    assert f[1] == "2001:db8::7" and f[2] == "8443", f
    ask(srv, "/xreal/2", ["X-Real-IP: 203.0.113.9:1234"])
    f = logged(srv, "/xreal/2")
    assert f[1] == "203.0.113.9" and f[2] == "1234", f
    ask(srv, "/custom/1", ["CF-Connecting-IP: 2001:db8::1"])
    assert logged(srv, "/custom/1")[1] == "2001:db8::1"


@pytest.mark.parametrize("value", ["", "garbage", "1.2.3", "[::1", "1.2.3.4:99999",
                                   ", ,", "1.2.3.4 5.6.7.8"])
def test_bad_values_change_nothing(srv, value):
    path = "/bad/%d" % abs(hash(value))
    r = ask(srv, path, ["X-Forwarded-For: " + value] if value else [])
    assert r.status == 200, r
    assert logged(srv, path)[1] == "127.0.0.1"


def test_untrusted_peer_and_location_level(srv):
    ask(srv, "/u", ["X-Real-IP: 203.0.113.5"], port=srv.ports[2])
    f = logged(srv, "/u")
    assert f[1] == "127.0.0.1" and f[3] == "127.0.0.1", f
    ask(srv, "/loc/x", ["X-Real-IP: 203.0.113.6"], port=srv.ports[2])
    assert logged(srv, "/loc/x")[1] == "203.0.113.6"


def test_limit_key_is_the_real_address(srv):
    assert ask(srv, "/lim/1", ["X-Forwarded-For: 198.51.100.10"]).status == 200
    assert ask(srv, "/lim/2", ["X-Forwarded-For: 198.51.100.11"]).status == 200
    assert ask(srv, "/lim/3", ["X-Forwarded-For: 198.51.100.10"]).status == 503
    assert "client: 198.51.100.10" in srv.error_log()


def test_proxy_forwards_the_real_address(sws, origin):
    import json
    o = origin()
    s = sws(server="""
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Forwarded-For;
        location / { proxy_pass http://%s;
                     proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; }
""" % o.addr)
    r = h.curl(s.url("/echo"), headers=["X-Forwarded-For: 203.0.113.77"])
    assert r.status == 200, r
    req = json.loads(r.body)
    xff = [v for k, v in req["headers"] if k.lower() == "x-forwarded-for"]
    # what came, then the client as realip found it (nginx's
    # $proxy_add_x_forwarded_for does the same)
    assert xff == ["203.0.113.77, 203.0.113.77"], xff


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("set_real_ip_from 10.0.0.0/33;", 'invalid parameter "10.0.0.0/33"'),
        ("set_real_ip_from 10.0.0/8;", 'invalid parameter "10.0.0/8"'),
        ("set_real_ip_from 2001:db8::/129;", 'invalid parameter "2001:db8::/129"'),
        ("set_real_ip_from localhost;", 'invalid parameter "localhost"'),
        ("set_real_ip_from 10.0.0.0/x;", 'invalid parameter "10.0.0.0/x"'),
        ("real_ip_header X:Y;", 'invalid header name "X:Y"'),
        ("real_ip_header X-Real-IP; real_ip_header X-Forwarded-For;",
         '"real_ip_header" directive is duplicate'),
        ("real_ip_recursive yes;", 'invalid value "yes"'),
    ])
