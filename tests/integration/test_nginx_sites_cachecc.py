"""The cache's Vary handling and targeted fields under nginx 1.22 and under
scalwsd, side by side, on one configuration in front of one origin: where
they agree, and the differences docs/compat.md lists as scalwsd's on
purpose (a normal form of the Vary'd fields; CDN-Cache-Control)."""
import swsharness as h
from cacheorigin import corigin  # noqa: F401
from test_cache_rfc_round2 import side_by_side  # noqa: F401

SITE = """
    proxy_cache_path @DIR@/cache keys_zone=c:1m;
    server {
        listen 127.0.0.1:@PORT@;
        location / {
            proxy_pass http://%s;
            proxy_cache c;
            add_header X-Cache $upstream_cache_status always;
        }
    }
"""


def statuses(port, path, field, values):
    out = []
    for v in values:
        r = h.curl("http://127.0.0.1:%d%s" % (port, path),
                   headers=["%s: %s" % (field, v)] if v is not None else [])
        assert r.status == 200
        out.append(r.header("X-Cache"))
    return out


def test_vary_beside_nginx(side_by_side, corigin):
    o = corigin()
    vary = [("Cache-Control", "max-age=60")]
    o.set("/c/al", body=b"al", headers=vary + [("Vary", "Accept-Language")])
    o.set("/c/ux", body=b"ux", headers=vary + [("Vary", "X-Thing")])
    o.set("/c/st", body=b"st", headers=vary + [("Vary", "*")])
    o.set("/c/st2", body=b"st", headers=vary + [("Vary", "Accept, *")])
    ports = side_by_side(SITE % o.addr)
    seen = {}
    for who, port in ports.items():
        seen[who] = (
            statuses(port, "/c/al", "Accept-Language", ["en-US,fr;q=0.5", "en-US,fr;q=0.5",
                                                        "fr;q=0.5, en-US", "EN-us,fr;q=0.50"]),
            statuses(port, "/c/ux", "X-Thing", ["a, b", "a, b", "a,b"]),
            statuses(port, "/c/st", "Accept", ["*/*", "*/*"]),
            statuses(port, "/c/st2", "Accept", ["*/*", "*/*"]),
        )
    # the same values: both hit; Vary: * never
    assert seen["nginx"][0][:2] == seen["scalwsd"][0][:2] == ["MISS", "HIT"]
    assert seen["nginx"][1][:2] == seen["scalwsd"][1][:2] == ["MISS", "HIT"]
    assert seen["nginx"][2] == seen["scalwsd"][2] == ["MISS", "MISS"]
    # nginx compares the values as they came; scalwsd their normal form
    assert seen["nginx"][0][2:] == ["MISS", "MISS"]
    assert seen["scalwsd"][0][2:] == ["HIT", "HIT"]
    assert seen["nginx"][1][2:] == ["MISS"]
    assert seen["scalwsd"][1][2:] == ["HIT"]
    # a "*" among other names: nginx looks for "*" alone
    assert seen["nginx"][3] == ["MISS", "HIT"]
    assert seen["scalwsd"][3] == ["MISS", "MISS"]


def test_cdn_cache_control_beside_nginx(side_by_side, corigin):
    o = corigin()
    o.set("/c/cdn", body=b"cdn", headers=[("Cache-Control", "no-store"),
                                          ("CDN-Cache-Control", "max-age=60")])
    ports = side_by_side(SITE % o.addr)
    seen = {who: statuses(port, "/c/cdn", "X-Any", [None, None])
            for who, port in ports.items()}
    # nginx reads Cache-Control alone; RFC 9213 gives the CDN's field to a
    # CDN's cache
    assert seen == {"nginx": ["MISS", "MISS"], "scalwsd": ["MISS", "HIT"]}

