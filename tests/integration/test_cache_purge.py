"""proxy_cache_purge: a PURGE request from an allowed address removes the
entry of its key (with every variant), or every key under a prefix ending
in "*"; others get 403. Also the SDK function behind it
(sws_http_cache_purge), through a test module that calls it by name."""
import os

import swsharness as h
from cacheorigin import corigin, entry_files, get, start  # noqa: F401


def purge(srv, path):
    return h.curl(srv.url(path), method="PURGE")


def test_purge_one_key(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_purge 127.0.0.1;")
    get(srv, "/c/p/a")
    get(srv, "/c/p/b")
    assert get(srv, "/c/p/a")[1] == "HIT"
    r = purge(srv, "/c/p/a")
    assert r.status == 200 and r.body == b"purged 1\n"
    assert get(srv, "/c/p/a")[1] == "MISS"
    assert get(srv, "/c/p/b")[1] == "HIT"                 # the other stays
    r = purge(srv, "/c/p/none")
    assert r.status == 404 and r.body == b"purged 0\n"
    assert len(entry_files(srv)) == 2


def test_purge_a_prefix(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_purge 127.0.0.0/8 ::1;")
    for p in ("/c/x/1", "/c/x/2", "/c/x/3?q=1", "/c/y/1"):
        get(srv, p)
    o.set("/c/x/v", headers=[("Cache-Control", "max-age=60"), ("Vary", "Accept")])
    get(srv, "/c/x/v", headers=["Accept: a"])
    get(srv, "/c/x/v", headers=["Accept: b"])
    assert len(entry_files(srv)) == 6
    r = purge(srv, "/c/x/*")
    assert r.status == 200 and r.body == b"purged 5\n", r
    for p in ("/c/x/1", "/c/x/2", "/c/x/3?q=1"):
        assert get(srv, p)[1] == "MISS"
    assert get(srv, "/c/x/v", headers=["Accept: a"])[1] == "MISS"
    assert get(srv, "/c/y/1")[1] == "HIT"


def test_purge_with_variants_removes_them_all(sws, corigin):
    o = corigin()
    o.set("/c/pv", headers=[("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")])
    srv = start(sws, o, loc="proxy_cache_purge all;")
    get(srv, "/c/pv", headers=["Accept-Language: en"])
    get(srv, "/c/pv", headers=["Accept-Language: fr"])
    assert purge(srv, "/c/pv").body == b"purged 2\n"
    assert entry_files(srv) == []
    assert get(srv, "/c/pv", headers=["Accept-Language: en"])[1] == "MISS"


def test_purge_from_elsewhere_is_forbidden(sws, corigin):
    o = corigin()
    srv = start(sws, o, loc="proxy_cache_purge 10.0.0.0/8 192.168.1.1;")
    get(srv, "/c/f")
    assert purge(srv, "/c/f").status == 403
    assert get(srv, "/c/f")[1] == "HIT"


def test_without_proxy_cache_purge_purge_goes_to_the_origin(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    get(srv, "/c/n")
    purge(srv, "/c/n")
    assert o.last().method == "PURGE"
    # a method of unknown safety the origin answered 200: RFC 9111 4.4
    # invalidates the target URI (test_cache_rfc_round2.py)
    assert get(srv, "/c/n")[1] == "MISS"


def test_purge_configuration_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { location / { proxy_cache_purge 1.2.3.4/40; } }", "invalid address"),
        ("server { location / { proxy_cache_purge nowhere; } }", "invalid address"),
    ])


PURGER = r"""
#include <scalws/scalws.h>
extern sws_module_t sws_module;

/* tpurge NAME: a location answering "removed N" for the key in ?... */
typedef struct { sws_str_t cache; } tp_conf_t;

static sws_int_t
tp_handler(sws_http_request_t *r)
{
    static const sws_str_t type = sws_string("text/plain");
    tp_conf_t  *c = sws_http_loc_conf(r, &sws_module);
    sws_uint_t  n;
    sws_str_t   body;
    u_char     *p = sws_pnalloc(sws_http_pool(r), 64);
    sws_int_t   rc = sws_http_cache_purge(r, &c->cache, sws_http_args(r), &n);

    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = p;
    body.len = (size_t) (sws_slprintf(p, p + 64, "%s %lu\n", rc == SWS_OK ? "removed"
                                      : rc == SWS_DECLINED ? "nocache" : "error",
                                      (unsigned long) n) - p);
    return sws_http_send_response(r, 200, &type, &body);
}

static char *
tp_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    tp_conf_t *c = conf;
    (void) cmd;
    c->cache = *sws_conf_arg(cf, 1);
    return sws_http_set_content_handler(cf, tp_handler, "tpurge") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static void *
tp_create(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(tp_conf_t));
}

static const sws_command_t tp_commands[] = {
    { "tpurge", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, tp_directive, SWS_HTTP_LOC_CONF_OFFSET,
      0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tpurge",
    .commands = tp_commands,
    .create_loc_conf = tp_create,
};
"""


def test_another_module_purges_by_cache_name(sws, corigin, tmp_path_factory):
    so = h.build_module(tmp_path_factory.mktemp("tpurge"), "tpurge", PURGER)
    o = corigin()
    srv = start(sws, o, load="load_module %s;" % so,
                server="location = /purge { tpurge c; } location = /purge2 { tpurge zz; }")
    get(srv, "/c/m/1")
    get(srv, "/c/m/2")
    key = "http%s/c/m/" % o.addr
    r = h.curl(srv.url("/purge?" + key + "1"))
    assert r.body == b"removed 1\n", r
    assert get(srv, "/c/m/1")[1] == "MISS"
    assert h.curl(srv.url("/purge?" + key + "*")).body == b"removed 2\n"
    assert h.curl(srv.url("/purge2?x")).body == b"nocache 0\n"
    assert os.path.isdir(str(srv.tmp / "cache"))
