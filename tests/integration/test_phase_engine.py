"""The phase engine: each location (server level, if block, limit_except
block) runs only the handlers of the modules configured there, yet every
level that a request reaches runs its own: inherited directives, the
server's rewrite and realip before a location is chosen, if blocks,
limit_except, internal redirects (error_page, try_files, index), named and
nested locations. And the order of the phases: realip, then limit_req, then
the access checks."""
import pytest

import swsharness as h

SERVER = r"""
        # the server's own level: realip (POST_READ) and rewrite (SERVER_REWRITE)
        set_real_ip_from 127.0.0.1;
        real_ip_header X-From;
        rewrite ^/old/(.*)$ /new/$1;
        location /new/ { return 200 "new $1 $remote_addr"; }

        location /inherit/ {
            deny all;
            location /inherit/nested/ { try_files /ok.txt =404; }
            location /inherit/open/ { allow all; try_files /ok.txt =404; }
        }
        location /plain/ { try_files /ok.txt =404; }

        # the log handler where logging is on, not where it is off
        location /logoff { access_log off; return 200 "off"; }
        location /logon/ { access_log @TMP@/on.log; return 200 "on"; }
        # a location whose rewrite phase enters an if block that has more
        # handlers than the location (its own allow/deny)
        location /ifdeny {
            if ($arg_deny) { deny all; }
            try_files /ok.txt =404;
        }
        location /except {
            limit_except GET { deny all; }
            try_files /ok.txt =404;
        }
        location /redirect {
            error_page 404 = /inherit/nested/x;
            try_files /nothing =404;
        }
        location /named {
            try_files /nothing @guarded;
        }
        location @guarded {
            auth_basic "named"; auth_basic_user_file @TMP@/htpasswd;
            try_files /ok.txt =404;
        }
        # realip in a location only (PREACCESS), before limit_req and allow/deny
        location /realip/ {
            set_real_ip_from 127.0.0.1;
            real_ip_header X-Real;
            allow 10.0.0.0/8; deny all;
            try_files /ok.txt =404;
        }
        location /limited/ {
            set_real_ip_from 127.0.0.1;
            real_ip_header X-Real;
            limit_req zone=byaddr nodelay;
            try_files /ok.txt =404;
        }
"""

HTTP = "limit_req_zone $binary_remote_addr zone=byaddr:1m rate=1r/m;"


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=SERVER, http=HTTP,
                      files={"html/ok.txt": "ok\n", "htpasswd": "u:{PLAIN}p\n"})


def get(srv, path, headers=(), method="GET"):
    r = h.curl(srv.url(path), headers=list(headers), method=method)
    return r.status, r.body.decode()


def test_server_level_rewrite_and_realip_run_before_the_location(srv):
    # $1: the server's rewrite's capture, the last regex matched (as nginx)
    assert get(srv, "/old/a", ["X-From: 10.1.2.3"]) == (200, "new a 10.1.2.3")


def test_inherited_access_rules_in_nested_locations(srv):
    assert get(srv, "/inherit/x")[0] == 403
    assert get(srv, "/inherit/nested/x")[0] == 403
    assert get(srv, "/inherit/open/x") == (200, "ok\n")
    assert get(srv, "/plain/x") == (200, "ok\n")


def test_log_handler_only_where_logging_is_on(srv):
    assert get(srv, "/logoff")[0] == 200
    assert get(srv, "/logon/nested")[0] == 200
    assert get(srv, "/plain/logged")[0] == 200
    assert h.wait_for(lambda: "GET /plain/logged" in srv.access_log()
                      and "GET /logon/nested" in (srv.tmp / "on.log").read_text())
    assert "/logoff" not in srv.access_log() + (srv.tmp / "on.log").read_text()


def test_if_block_with_handlers_the_location_has_not(srv):
    assert get(srv, "/ifdeny") == (200, "ok\n")
    assert get(srv, "/ifdeny?deny=1")[0] == 403


def test_limit_except_block(srv):
    assert get(srv, "/except") == (200, "ok\n")
    assert get(srv, "/except", method="POST")[0] == 403


def test_internal_redirect_runs_the_new_locations_checks(srv):
    # error_page into a location that denies: 403, not the file
    assert get(srv, "/redirect")[0] == 403


def test_named_location_runs_its_own_checks(srv):
    assert get(srv, "/named")[0] == 401
    assert get(srv, "/named", ["Authorization: Basic dTpw"]) == (200, "ok\n")


def test_realip_of_a_location_before_its_access_checks(srv):
    assert get(srv, "/realip/x")[0] == 403
    assert get(srv, "/realip/x", ["X-Real: 10.9.9.9"]) == (200, "ok\n")


def test_realip_before_limit_req(srv):
    # the limit's key is the address realip set: one request each
    assert get(srv, "/limited/a", ["X-Real: 10.0.0.1"])[0] == 200
    assert get(srv, "/limited/b", ["X-Real: 10.0.0.2"])[0] == 200
    assert get(srv, "/limited/c", ["X-Real: 10.0.0.1"])[0] == 503


# A module of the test's own (MODNAME is its name, so it loads before or
# after access and auth_basic): an ACCESS handler at order 150 that answers
# 418 wherever "ordertest on" is set, and nowhere else (its active() test);
# registrations the core must refuse make its postconfiguration fail.
ORDER_MODULE = r"""
#include <scalws/scalws.h>

typedef struct { sws_int_t on; } ot_conf_t;

SWS_EXPORT sws_module_t sws_module;

static sws_int_t
ot_handler(sws_http_request_t *r)
{
    (void) r;
    return 418;                     /* ran: only where it is active */
}

static sws_uint_t
ot_active(const void *conf)
{
    return ((const ot_conf_t *) conf)->on == 1;
}

static sws_int_t
ot_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_ACCESS_PHASE, .order = 150, .handler = ot_handler,
        .module = &sws_module, .active = ot_active
    };
    sws_http_phase_handler_t bad = h;

    bad.phase = SWS_HTTP_PHASE_COUNT;                     /* not a phase */
    if (sws_http_register_phase_handler(cf, &bad) != SWS_ERROR) return SWS_ERROR;
    bad.phase = SWS_HTTP_FIND_LOCATION_PHASE;             /* the core's */
    if (sws_http_register_phase_handler(cf, &bad) != SWS_ERROR) return SWS_ERROR;
    bad.phase = (sws_http_phase_t) 10;
    if (sws_http_register_phase_handler(cf, &bad) != SWS_ERROR) return SWS_ERROR;
    bad = h;
    bad.module = NULL;                                    /* active needs it */
    if (sws_http_register_phase_handler(cf, &bad) != SWS_ERROR) return SWS_ERROR;
    bad = h;
    bad.handler = NULL;
    if (sws_http_register_phase_handler(cf, &bad) != SWS_ERROR) return SWS_ERROR;
    return sws_http_register_phase_handler(cf, &h);
}

static void *
ot_create(sws_conf_t *cf)
{
    ot_conf_t *c = sws_pcalloc(sws_conf_pool(cf), sizeof(ot_conf_t));

    if (c) c->on = SWS_UNSET;
    return c;
}

static char *
ot_merge(sws_conf_t *cf, void *parent, void *child)
{
    ot_conf_t *p = parent, *c = child;

    (void) cf;
    sws_conf_merge_value(c->on, p->on, 0);
    return SWS_CONF_OK;
}

static const sws_command_t ot_commands[] = {
    { "ordertest", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_FLAG,
      sws_conf_set_flag_slot, SWS_HTTP_LOC_CONF_OFFSET, offsetof(ot_conf_t, on), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "MODNAME",
    .commands = ot_commands,
    .create_loc_conf = ot_create,
    .merge_loc_conf = ot_merge,
    .postconfiguration = ot_init,
};
"""

ORDER_SERVER = r"""
        location /off/ { deny all; }
        location /deny/ { ordertest on; deny all; }
        location /auth/ { ordertest on; auth_basic "x"; auth_basic_user_file @TMP@/htpasswd; }
        location /inherit/ {
            ordertest on;
            location /inherit/off/ { ordertest off; try_files /ok.txt =404; }
            try_files /ok.txt =404;
        }
        location /none/ { try_files /ok.txt =404; }
"""


@pytest.mark.parametrize("name", ["aa_order", "zz_order"])
def test_module_order_and_active_not_load_order(sws, tmp_path, name):
    so = h.build_module(tmp_path / "mod", name, ORDER_MODULE.replace("MODNAME", name))
    srv = sws(load="load_module %s;" % so, server=ORDER_SERVER,
              files={"html/ok.txt": "ok\n", "htpasswd": "u:{PLAIN}p\n"})
    # allow/deny (order 100) before it, auth_basic (200) after it, whatever
    # the module's name (its place in the load order)
    assert get(srv, "/deny/x")[0] == 403
    assert get(srv, "/auth/x")[0] == 418
    # active where "ordertest on" is set or inherited, absent elsewhere
    assert get(srv, "/inherit/x")[0] == 418
    assert get(srv, "/inherit/off/x") == (200, "ok\n")
    assert get(srv, "/none/x") == (200, "ok\n")
    assert get(srv, "/off/x")[0] == 403
