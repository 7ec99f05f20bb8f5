/*
 * The admin module: a server of its own (docs/admin.md)
 *
 *   http {
 *       admin {
 *           listen 127.0.0.1:9090;          # the default; or unix:PATH
 *           token_file conf/admin.tokens;   # "ro TOKEN" / "rw TOKEN" lines
 *       }
 *   }
 *
 * The block is a server { } read by the core (sws_http_conf_own_server):
 * listen and the ssl directives are the ordinary ones, and its addresses
 * are its alone, so nothing of it answers on another server. A listen that
 * is not loopback or a unix socket needs a token_file. With tokens, every
 * path but /health and /ready asks for "Authorization: Bearer TOKEN": a
 * read-only token reads, a read-write token changes too.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "sws_admin.h"

static void *sws_admin_create_main_conf(sws_conf_t *cf);
static void *sws_admin_create_srv_conf(sws_conf_t *cf);
static char *sws_admin_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_admin_token_file(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_admin_only(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static sws_int_t sws_admin_init_master(sws_cycle_t *cycle);

static const sws_command_t sws_admin_commands[] = {
    { "admin", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_NOARGS,
      sws_admin_block, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "token_file", SWS_HTTP_SRV_CONF | SWS_CONF_TAKE1,
      sws_admin_token_file, SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "drain_time", SWS_HTTP_SRV_CONF | SWS_CONF_TAKE1,
      sws_admin_only, SWS_HTTP_SRV_CONF_OFFSET, offsetof(sws_admin_srv_conf_t, drain_time),
      NULL },
    { "state_file", SWS_HTTP_SRV_CONF | SWS_CONF_TAKE1,
      sws_admin_only, SWS_HTTP_MAIN_CONF_OFFSET, offsetof(sws_admin_main_conf_t, state_file),
      NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "admin",
    .commands = sws_admin_commands,
    .create_main_conf = sws_admin_create_main_conf,
    .create_srv_conf = sws_admin_create_srv_conf,
    .init_master = sws_admin_init_master,
};

/* The configuration being read or last read (for init_master, which is
 * given only the cycle). */
static sws_admin_main_conf_t  *sws_admin_main;
static sws_cycle_t            *sws_admin_main_cycle;

static const sws_str_t sws_admin_json_type = sws_string("application/json");
static const sws_str_t sws_admin_prom_type = sws_string("text/plain; version=0.0.4; charset=utf-8");
static const sws_str_t sws_admin_om_type =
    sws_string("application/openmetrics-text; version=1.0.0; charset=utf-8");

/* ---- answers ---- */

static sws_int_t
sws_admin_send(sws_http_request_t *r, sws_uint_t status, const sws_str_t *type,
    sws_admin_out_t *o)
{
    static const sws_str_t  cc = sws_string("Cache-Control"), no_store = sws_string("no-store");
    sws_str_t               body;

    if (sws_http_header_out_add(r, &cc, &no_store) == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = o->start;
    body.len = (size_t) (o->pos - o->start);
    return sws_http_send_response(r, status, type, &body);
}

/* {"error": {"status": N, "message": "..."}} */
static sws_int_t
sws_admin_error(sws_http_request_t *r, sws_uint_t status, const char *message)
{
    sws_admin_out_t  o;
    size_t           size = 64 + 6 * strlen(message);
    u_char          *buf = sws_pnalloc(sws_http_pool(r), size);

    if (buf == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_out_init(&o, buf, size);
    sws_admin_json_open(&o, NULL, '{');
    sws_admin_json_open(&o, "error", '{');
    sws_admin_json_uint(&o, "status", status);
    sws_admin_json_cstr(&o, "message", message);
    sws_admin_json_close(&o, '}');
    sws_admin_json_close(&o, '}');
    sws_admin_out_bytes(&o, "\n", 1);
    return sws_admin_send(r, status, &sws_admin_json_type, &o);
}

/* A document written by write(r, &o, data) into a buffer that grows until
 * it fits. */
typedef sws_int_t (*sws_admin_writer_pt)(sws_http_request_t *r, sws_admin_out_t *o, void *data);

static sws_int_t
sws_admin_write(sws_http_request_t *r, sws_uint_t status, sws_admin_writer_pt write,
    void *data, const sws_str_t *type)
{
    sws_admin_out_t  o;
    size_t           size;
    u_char          *buf;
    sws_int_t        rc;

    for (size = 16384; size <= 64 * 1024 * 1024; size *= 4) {
        buf = sws_pnalloc(sws_http_pool(r), size);
        if (buf == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        sws_admin_out_init(&o, buf, size);
        rc = write(r, &o, data);
        if (rc != SWS_OK) {
            return rc;
        }
        if (!o.overflow) {
            return sws_admin_send(r, status, type, &o);
        }
    }
    return SWS_HTTP_INTERNAL_SERVER_ERROR;
}

/* ---- access ---- */

/* 1 when a and b are the same, in a time that depends on b's length only
 * (b is the token we keep, a what the client sent). */
static int
sws_admin_token_eq(const sws_str_t *a, const sws_str_t *b)
{
    volatile u_char  diff = a->len != b->len;
    size_t           i;

    for (i = 0; i < b->len; i++) {
        diff |= (u_char) (b->data[i] ^ (a->len ? a->data[i % a->len] : 0));
    }
    return diff == 0;
}

/* The access the request's bearer token gives: SWS_ADMIN_READ | WRITE;
 * both when the server has no tokens (it listens privately then); 0 for
 * no token or a wrong one. */
static sws_uint_t
sws_admin_access(sws_http_request_t *r, sws_admin_srv_conf_t *ascf)
{
    const sws_str_t    *h;
    sws_str_t           presented;
    sws_admin_token_t  *t;
    sws_uint_t          i, access = 0;

    if (ascf->tokens == NULL) {
        return SWS_ADMIN_READ | SWS_ADMIN_WRITE;
    }
    h = sws_http_header_in(r, "authorization", sizeof("authorization") - 1);
    if (h == NULL || h->len < 7 || sws_strncasecmp(h->data, (u_char *) "bearer ", 7) != 0) {
        return 0;
    }
    presented.data = h->data + 7;
    presented.len = h->len - 7;
    while (presented.len && presented.data[0] == ' ') {
        presented.data++;
        presented.len--;
    }
    while (presented.len && presented.data[presented.len - 1] == ' ') {
        presented.len--;
    }
    /* Every token is compared, whichever matches. */
    t = ascf->tokens->elts;
    for (i = 0; i < ascf->tokens->nelts; i++) {
        if (sws_admin_token_eq(&presented, &t[i].value)) {
            access |= t[i].access;
        }
    }
    return access;
}

static sws_int_t
sws_admin_denied(sws_http_request_t *r, sws_uint_t have)
{
    static const sws_str_t  www = sws_string("WWW-Authenticate"),
                            bearer = sws_string("Bearer realm=\"scalws admin\"");

    if (have == 0) {
        if (sws_http_header_out_add(r, &www, &bearer) == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        return sws_admin_error(r, SWS_HTTP_UNAUTHORIZED,
                               "a valid token is needed: Authorization: Bearer TOKEN");
    }
    return sws_admin_error(r, SWS_HTTP_FORBIDDEN, "this token may only read");
}

/* ---- the routes ---- */

static sws_int_t
sws_admin_health(sws_http_request_t *r, sws_admin_out_t *o, void *data)
{
    sws_admin_json_open(o, NULL, '{');
    sws_admin_json_cstr(o, "status", "alive");
    sws_admin_json_close(o, '}');
    sws_admin_out_bytes(o, "\n", 1);
    return SWS_OK;
}

/* Ready: this worker answers, so the configuration is loaded and the
 * listeners are open; and the server is not draining. */
static sws_int_t
sws_admin_ready_writer(sws_http_request_t *r, sws_admin_out_t *o, void *data)
{
    sws_admin_json_open(o, NULL, '{');
    sws_admin_json_bool(o, "ready", data == NULL);
    sws_admin_json_close(o, '}');
    sws_admin_out_bytes(o, "\n", 1);
    return SWS_OK;
}

static sws_int_t
sws_admin_ready(sws_http_request_t *r)
{
    sws_admin_main_conf_t *amcf = sws_http_main_conf(r, &sws_module);
    sws_admin_state_t     *st = amcf->zone->data;
    int                    draining = st->drain_at != 0;

    return sws_admin_write(r, draining ? SWS_HTTP_SERVICE_UNAVAILABLE : SWS_HTTP_OK,
                           sws_admin_ready_writer, draining ? r : NULL, &sws_admin_json_type);
}

static sws_int_t
sws_admin_api(sws_http_request_t *r, sws_admin_out_t *o, void *data)
{
    const sws_admin_section_t *one = data, *s;

    if (one) {
        one->write(r, o, NULL);
    } else {
        sws_admin_json_open(o, NULL, '{');
        for (s = sws_admin_sections; s->name; s++) {
            if (strchr(s->name, '/') == NULL) {
                s->write(r, o, s->name);
            }
        }
        sws_admin_json_close(o, '}');
    }
    sws_admin_out_bytes(o, "\n", 1);
    return SWS_OK;
}

/* GET /api/http/server_zones/NAME, /api/http/location_zones/NAME */
typedef struct {
    sws_uint_t  location;
    sws_str_t   name;
} sws_admin_zone_path_t;

static sws_int_t
sws_admin_zone_writer(sws_http_request_t *r, sws_admin_out_t *o, void *data)
{
    sws_admin_zone_path_t *zp = data;

    (void) sws_admin_status_zone_named(r, o, zp->location, &zp->name);
    sws_admin_out_bytes(o, "\n", 1);
    return SWS_OK;
}

/* A zone's path (after "/api/", its trailing "/" off): 1 and *zp, or 0. */
static int
sws_admin_zone_path(const sws_str_t *name, sws_admin_zone_path_t *zp)
{
    static const char *const  prefixes[2] = { "http/server_zones/", "http/location_zones/" };
    sws_uint_t                k;
    size_t                    n;

    for (k = 0; k < 2; k++) {
        n = strlen(prefixes[k]);
        if (name->len > n && memcmp(name->data, prefixes[k], n) == 0) {
            zp->location = k;
            zp->name.data = name->data + n;
            zp->name.len = name->len - n;
            return 1;
        }
    }
    return 0;
}

static sws_int_t
sws_admin_metrics_writer(sws_http_request_t *r, sws_admin_out_t *o, void *data)
{
    return sws_admin_metrics(r, o, data != NULL);
}

/* Does the client ask for OpenMetrics (and not prefer the text format)? */
static int
sws_admin_wants_openmetrics(sws_http_request_t *r)
{
    const sws_str_t *accept = sws_http_header_in(r, "accept", sizeof("accept") - 1);
    static const char om[] = "application/openmetrics-text";
    size_t           i;

    if (accept == NULL) {
        return 0;
    }
    for (i = 0; i + sizeof(om) - 1 <= accept->len; i++) {
        if (sws_strncasecmp(accept->data + i, (u_char *) om, sizeof(om) - 1) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The console's files: only from here (no frame, no script elsewhere). */
static sws_int_t
sws_admin_asset(sws_http_request_t *r, const sws_admin_asset_t *a)
{
    static const sws_str_t  csp = sws_string("Content-Security-Policy"),
                            policy = sws_string("default-src 'self'; frame-ancestors 'none'"),
                            xcto = sws_string("X-Content-Type-Options"),
                            nosniff = sws_string("nosniff");
    sws_str_t               type, body;

    if (sws_http_header_out_add(r, &csp, &policy) == NULL
        || sws_http_header_out_add(r, &xcto, &nosniff) == NULL)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    type.data = (u_char *) a->type;
    type.len = strlen(a->type);
    body.data = (u_char *) a->data;
    body.len = a->len;
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

static int
sws_admin_path_is(const sws_str_t *uri, const char *path)
{
    return sws_str_eq_cstr(uri, path);
}

static sws_int_t
sws_admin_handler(sws_http_request_t *r)
{
    sws_admin_srv_conf_t       *ascf = sws_http_srv_conf(r, &sws_module);
    const sws_str_t            *uri = sws_http_uri(r);
    const sws_admin_section_t  *s;
    const sws_admin_asset_t    *a;
    sws_admin_zone_path_t       zp;
    sws_str_t                   name;
    sws_uint_t                  method = sws_http_method(r), access;
    sws_int_t                   rc;
    int                         read = (method & (SWS_HTTP_GET | SWS_HTTP_HEAD)) != 0;

    if (read) {
        rc = sws_http_discard_body(r);
        if (rc != SWS_OK && rc != SWS_AGAIN) {
            return rc;
        }
    }

    /* For the probes of load balancers and orchestrators: no token. */
    if (sws_admin_path_is(uri, "/health") || sws_admin_path_is(uri, "/ready")) {
        if (!read) {
            return sws_admin_error(r, SWS_HTTP_NOT_ALLOWED, "only GET and HEAD here");
        }
        if (uri->data[1] == 'r') {
            return sws_admin_ready(r);
        }
        return sws_admin_write(r, SWS_HTTP_OK, sws_admin_health, NULL, &sws_admin_json_type);
    }

    /* The console's files are static: the page asks for a token itself. */
    for (a = sws_admin_console; a->path; a++) {
        if (sws_admin_path_is(uri, a->path)) {
            if (!read) {
                return sws_admin_error(r, SWS_HTTP_NOT_ALLOWED, "only GET and HEAD here");
            }
            return sws_admin_asset(r, a);
        }
    }

    access = sws_admin_access(r, ascf);
    if (!(access & SWS_ADMIN_READ)) {
        return sws_admin_denied(r, access);
    }

    if (sws_admin_path_is(uri, "/metrics")) {
        if (!read) {
            return sws_admin_error(r, SWS_HTTP_NOT_ALLOWED, "only GET and HEAD here");
        }
        if (sws_admin_wants_openmetrics(r)) {
            return sws_admin_write(r, SWS_HTTP_OK, sws_admin_metrics_writer, r,
                                   &sws_admin_om_type);
        }
        return sws_admin_write(r, SWS_HTTP_OK, sws_admin_metrics_writer, NULL,
                               &sws_admin_prom_type);
    }

    if (uri->len >= 5 && memcmp(uri->data, "/api/", 5) == 0) {
        name.data = uri->data + 5;
        name.len = uri->len - 5;
        if (name.len && name.data[name.len - 1] == '/') {
            name.len--;
        }
        s = NULL;
        if (name.len) {
            for (s = sws_admin_sections; s->name; s++) {
                if (sws_str_eq_cstr(&name, s->name)) {
                    break;
                }
            }
        }
        if (!read) {
            if (!(access & SWS_ADMIN_WRITE)) {
                return sws_admin_denied(r, access);
            }
            return sws_admin_change(r, &name);
        }
        if (s && s->name == NULL) {
            if (sws_admin_zone_path(&name, &zp)) {
                if (sws_admin_status_zone_named(r, NULL, zp.location, &zp.name) != SWS_OK) {
                    return sws_admin_error(r, SWS_HTTP_NOT_FOUND, "no such status zone");
                }
                return sws_admin_write(r, SWS_HTTP_OK, sws_admin_zone_writer, &zp,
                                       &sws_admin_json_type);
            }
            return sws_admin_error(r, SWS_HTTP_NOT_FOUND, "no such API path");
        }
        return sws_admin_write(r, SWS_HTTP_OK, sws_admin_api, (void *) s, &sws_admin_json_type);
    }
    return sws_admin_error(r, SWS_HTTP_NOT_FOUND, "no such admin path");
}

/* ---- what lasts across reloads ---- */

static sws_int_t
sws_admin_state_init(sws_shm_zone_t *zone, void *old_data)
{
    sws_admin_state_t *st = (sws_admin_state_t *) zone->addr;

    zone->data = st;
    if (old_data == NULL) {
        st->start = time(NULL);
    }
    st->loaded = time(NULL);
    return SWS_OK;
}

/* The SHA-256 of the main configuration file, in hex ("" if unreadable). */
static void
sws_admin_conf_checksum(sws_admin_main_conf_t *amcf)
{
    static const char  hex[] = "0123456789abcdef";
    u_char             buf[8192], md[EVP_MAX_MD_SIZE];
    unsigned           mdlen = 0, i;
    EVP_MD_CTX        *ctx;
    ssize_t            n;
    int                fd, ok;

    amcf->conf_sha256[0] = '\0';
    fd = open((char *) amcf->conf_file.data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return;
    }
    ctx = EVP_MD_CTX_new();
    ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    while (ok && (n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            ok = errno == EINTR;
            continue;
        }
        ok = EVP_DigestUpdate(ctx, buf, (size_t) n) == 1;
    }
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1;
    EVP_MD_CTX_free(ctx);
    close(fd);
    if (!ok) {
        return;
    }
    for (i = 0; i < mdlen && i < 32; i++) {
        amcf->conf_sha256[2 * i] = (u_char) hex[md[i] >> 4];
        amcf->conf_sha256[2 * i + 1] = (u_char) hex[md[i] & 0xf];
    }
    amcf->conf_sha256[2 * i] = '\0';
}

/* ---- configuration ---- */

static void *
sws_admin_create_main_conf(sws_conf_t *cf)
{
    sws_admin_main_conf_t *amcf;

    amcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_admin_main_conf_t));
    if (amcf == NULL) {
        return NULL;
    }
    amcf->cycle = sws_conf_cycle(cf);
    amcf->conf_file = *sws_cycle_conf_file(amcf->cycle);
    amcf->log = sws_conf_log(cf);
    sws_admin_main = amcf;
    sws_admin_main_cycle = amcf->cycle;
    return amcf;
}

static void *
sws_admin_create_srv_conf(sws_conf_t *cf)
{
    sws_admin_srv_conf_t *ascf;

    ascf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_admin_srv_conf_t));
    if (ascf) {
        ascf->drain_time = SWS_UNSET_MSEC;
    }
    return ascf;
}

/* drain_time TIME, state_file PATH: in an admin block only. */
static char *
sws_admin_only(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_admin_main_conf_t *amcf = sws_conf_http_main_conf(cf, &sws_module);

    if (!amcf->parsing) {
        return "is only allowed in an admin block";
    }
    if (cmd->conf == SWS_HTTP_MAIN_CONF_OFFSET) {
        return sws_conf_set_path_slot(cf, cmd, conf);
    }
    return sws_conf_set_msec_slot(cf, cmd, conf);
}

static sws_int_t
sws_admin_init_master(sws_cycle_t *cycle)
{
    /* (a configuration without http { } leaves an older one's pointer) */
    if (sws_admin_main == NULL || sws_admin_main_cycle != cycle) {
        return SWS_OK;
    }
    return sws_admin_state_apply(cycle, sws_admin_main);
}

/* After the block: a listen others can reach needs tokens. */
static char *
sws_admin_block_done(sws_conf_t *cf, void *data)
{
    sws_admin_srv_conf_t *ascf = sws_conf_http_srv_conf(cf, &sws_module);
    sws_str_t             addr;
    const char           *file;
    sws_uint_t            line;

    ascf->admin = 1;
    if (ascf->drain_time == SWS_UNSET_MSEC) {
        ascf->drain_time = 30000;
    }
    if (ascf->tokens == NULL && sws_http_conf_public_listen(cf, &addr, &file, &line)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "the admin server listens on %.*s (in %s:%lu), which is not "
                           "loopback or a unix socket, without a token_file",
                           (int) addr.len, addr.data, file, (unsigned long) line);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
sws_admin_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_str_t  name = sws_string("admin:state");
    sws_admin_main_conf_t  *amcf = conf;
    char                   *rv;

    if (amcf->zone == NULL) {
        amcf->zone = sws_shm_zone_add(cf, &name, sizeof(sws_admin_state_t),
                                      sws_admin_state_init, &sws_module);
        if (amcf->zone == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_admin_conf_checksum(amcf);
    }
    amcf->parsing = 1;
    rv = sws_http_conf_own_server(cf, sws_admin_handler, "admin", "127.0.0.1:9090",
                                  sws_admin_block_done, NULL);
    amcf->parsing = 0;
    return rv;
}

/* One line of a token file: "ro TOKEN" or "rw TOKEN" (RFC 6750's token
 * characters, 16 or more), "#" comments, blank lines. */
static char *
sws_admin_token_line(sws_conf_t *cf, sws_admin_srv_conf_t *ascf, u_char *p, u_char *last)
{
    sws_admin_token_t  *t;
    u_char             *tok;
    sws_uint_t          access;

    while (p < last && (*p == ' ' || *p == '\t' || *p == '\r')) {
        p++;
    }
    while (last > p && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r')) {
        last--;
    }
    if (p == last || *p == '#') {
        return NULL;
    }
    if (last - p < 3 || (p[2] != ' ' && p[2] != '\t')) {
        return "is not \"ro TOKEN\" or \"rw TOKEN\"";
    }
    if (p[0] == 'r' && p[1] == 'o') {
        access = SWS_ADMIN_READ;
    } else if (p[0] == 'r' && p[1] == 'w') {
        access = SWS_ADMIN_READ | SWS_ADMIN_WRITE;
    } else {
        return "is not \"ro TOKEN\" or \"rw TOKEN\"";
    }
    for (p += 3; p < last && (*p == ' ' || *p == '\t'); p++) { /* void */ }
    for (tok = p; p < last; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
              || strchr("-._~+/=", *p)))
        {
            return "has a character a bearer token may not have";
        }
    }
    if (p - tok < 16) {
        return "has a token shorter than 16 characters";
    }
    t = sws_array_push(ascf->tokens);
    if (t == NULL) {
        return "is out of memory";
    }
    t->access = access;
    t->value.len = (size_t) (p - tok);
    t->value.data = sws_pnalloc(sws_conf_pool(cf), t->value.len);
    if (t->value.data == NULL) {
        return "is out of memory";
    }
    memcpy(t->value.data, tok, t->value.len);
    return NULL;
}

static char *
sws_admin_token_file(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_admin_main_conf_t *amcf = sws_conf_http_main_conf(cf, &sws_module);
    sws_admin_srv_conf_t  *ascf = conf;
    sws_str_t              file = *sws_conf_arg(cf, 1);
    u_char                 buf[65536], *p, *eol, *last;
    const char            *err;
    sws_uint_t             line;
    ssize_t                n;
    size_t                 len = 0;
    int                    fd;

    if (!amcf->parsing) {
        return "is only allowed in an admin block";
    }
    if (ascf->tokens) {
        return "is duplicate";
    }
    if (sws_conf_full_name(cf, &file, 1) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    fd = open((char *) file.data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "open() \"%s\" failed", file.data);
        return SWS_CONF_ERROR;
    }
    while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "read() \"%s\" failed", file.data);
            close(fd);
            return SWS_CONF_ERROR;
        }
        len += (size_t) n;
    }
    close(fd);
    if (len == sizeof(buf)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"%s\" is larger than 64k", file.data);
        return SWS_CONF_ERROR;
    }
    ascf->tokens = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_admin_token_t));
    if (ascf->tokens == NULL) {
        return SWS_CONF_ERROR;
    }
    ascf->token_file = file;
    last = buf + len;
    for (p = buf, line = 1; p < last; p = eol + 1, line++) {
        eol = memchr(p, '\n', (size_t) (last - p));
        if (eol == NULL) {
            eol = last;
        }
        err = sws_admin_token_line(cf, ascf, p, eol);
        if (err) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "line %lu of \"%s\" %s",
                               (unsigned long) line, file.data, err);
            return SWS_CONF_ERROR;
        }
    }
    if (ascf->tokens->nelts == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"%s\" has no token", file.data);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
