/*
 * userid on|v1|log|off; userid_service N; userid_name NAME;
 * userid_domain NAME|none; userid_path PATH; userid_expires TIME|max|off;
 * userid_p3p TEXT|none; userid_flags off|secure|httponly|samesite=...;
 * userid_mark off|C; $uid_got, $uid_set, $uid_reset.
 *
 * nginx's userid filter: a cookie that identifies clients. Its value is
 * the base64 of four 32-bit words: the service (by default the server's
 * IPv4 address, or the last four bytes of its IPv6 one), the time it was
 * made, a value of the worker (its start time's microseconds and pid) and
 * a sequence number. "on" writes the words in network byte order, "v1" in
 * the host's (the first version's format). A client's cookie is read from
 * its first 22 characters (the rest may be a mark or padding); one that is
 * shorter or not base64 is logged (at "error", as nginx 1.22 does) and
 * ignored.
 * $uid_got and $uid_set are "NAME=" and the four words in hexadecimal, as
 * they lie in memory (as nginx prints them). Setting $uid_reset (set) to
 * anything but "" or "0" makes a new cookie even for a client that sent a
 * good one; "log" also logs the old one.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* memmem */
#endif
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

#define SWS_USERID_OFF   0
#define SWS_USERID_LOG   1
#define SWS_USERID_V1    2
#define SWS_USERID_ON    3

#define SWS_USERID_EXPIRES_MAX  ((time_t) -2)  /* the fixed date of 2037 */

#define SWS_USERID_SECURE           0x02
#define SWS_USERID_HTTPONLY         0x04
#define SWS_USERID_SAMESITE_STRICT  0x08
#define SWS_USERID_SAMESITE_LAX     0x10
#define SWS_USERID_SAMESITE_NONE    0x20
#define SWS_USERID_FLAGS_SET        0x01      /* userid_flags given, even "off" */

typedef struct {
    sws_uint_t          enable;       /* SWS_UNSET_UINT until given */
    sws_int_t           service;      /* SWS_UNSET: the server's address */
    sws_str_t           name;         /* data NULL: unset */
    sws_str_t           domain;       /* "; domain=X", or "" for none */
    sws_str_t           path;         /* "; path=X" */
    sws_str_t           p3p;          /* "" for none */
    time_t              expires;      /* SWS_UNSET, 0 (off), seconds, or _MAX */
    sws_uint_t          flags;
    int                 mark;         /* -1 unset, 0 off */
    sws_http_format_t  *cookie;       /* "$cookie_NAME" */
} sws_userid_conf_t;

typedef struct {
    uint32_t   got[4];                /* the client's; got[3] 0: none */
    uint32_t   set[4];                /* to send; set[3] 0: nothing */
    sws_str_t  cookie;                /* the client's cookie value */
    unsigned   reset:1;
    unsigned   made:1;                /* set[] decided */
} sws_userid_ctx_t;

typedef struct {
    sws_http_format_t  *reset;        /* "$uid_reset" */
    sws_http_format_t  *server_addr;  /* "$server_addr" */
    unsigned            sets:1;       /* some level has userid on or v1 */
} sws_userid_main_conf_t;

static char *sws_userid_set_enable(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_userid_set_service(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_userid_set_text(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_userid_set_expires(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_userid_set_flags(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_userid_set_mark(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_userid_create_main_conf(sws_conf_t *cf);
static void *sws_userid_create_loc_conf(sws_conf_t *cf);
static char *sws_userid_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_userid_init(sws_conf_t *cf);
static sws_int_t sws_userid_init_worker(sws_cycle_t *cycle);

#define HTTP_ALL  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

/* which text field userid_set_text writes (the command's offset) */
enum { SWS_USERID_NAME, SWS_USERID_DOMAIN, SWS_USERID_PATH, SWS_USERID_P3P };

static const sws_command_t  sws_userid_commands[] = {
    { "userid", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_enable,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "userid_service", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_service,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "userid_name", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_text,
      SWS_HTTP_LOC_CONF_OFFSET, SWS_USERID_NAME, NULL },
    { "userid_domain", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_text,
      SWS_HTTP_LOC_CONF_OFFSET, SWS_USERID_DOMAIN, NULL },
    { "userid_path", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_text,
      SWS_HTTP_LOC_CONF_OFFSET, SWS_USERID_PATH, NULL },
    { "userid_p3p", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_text,
      SWS_HTTP_LOC_CONF_OFFSET, SWS_USERID_P3P, NULL },
    { "userid_expires", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_expires,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "userid_flags", HTTP_ALL | SWS_CONF_1MORE, sws_userid_set_flags,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "userid_mark", HTTP_ALL | SWS_CONF_TAKE1, sws_userid_set_mark,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "userid",
    .commands = sws_userid_commands,
    .create_main_conf = sws_userid_create_main_conf,
    .create_loc_conf = sws_userid_create_loc_conf,
    .merge_loc_conf = sws_userid_merge_loc_conf,
    .postconfiguration = sws_userid_init,
    .init_worker = sws_userid_init_worker,
};

static sws_http_header_filter_pt  sws_userid_next_header_filter;

/* the worker's word and sequences (nginx's starting values) */
static uint32_t  sws_userid_start;
static uint32_t  sws_userid_seq_v1 = 1;
static uint32_t  sws_userid_seq_v2 = 0x03030302;

static const char  sws_userid_max_expires[] = "; expires=Thu, 31-Dec-37 23:55:55 GMT";


/* ---- the client's cookie ---- */

/*
 * The first 22 characters of the cookie in standard base64, decoded as
 * nginx does: up to the first '=', no other byte outside the alphabet,
 * not one character over a multiple of four. 0 or -1.
 */
static int
sws_userid_decode(const u_char *src, u_char out[16])
{
    static const char  alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char        *c;
    uint32_t           acc = 0;
    size_t             len, i, bits = 0;
    u_char            *d = out;

    for (len = 0; len < 22 && src[len] != '='; len++) {
        if (src[len] == '\0' || strchr(alphabet, src[len]) == NULL) {
            return -1;
        }
    }
    if (len % 4 == 1) {
        return -1;
    }
    for (i = 0; i < len; i++) {
        c = strchr(alphabet, src[i]);
        acc = (acc << 6) | (uint32_t) (c - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *d++ = (u_char) (acc >> bits);
        }
    }
    return 0;
}


/* The Cookie field that holds "NAME=value" (for the log; $cookie_NAME
 * gives a copy of the value). */
static sws_str_t
sws_userid_field(sws_http_request_t *r, const sws_userid_conf_t *conf, const sws_str_t *value)
{
    const sws_array_t        *headers = sws_http_headers_in(r);
    const sws_http_header_t  *h = headers->elts;
    const u_char             *p, *last;
    sws_uint_t                i;
    sws_str_t                 none = *value;

    for (i = 0; i < headers->nelts; i++) {
        if (h[i].hash == 0 || !sws_str_eq_cstr(&h[i].name, "cookie")) {
            continue;
        }
        p = h[i].value.data;
        last = p + h[i].value.len;
        while ((p = memmem(p, (size_t) (last - p), conf->name.data, conf->name.len))) {
            p += conf->name.len;
            if (p < last && *p == '=' && (size_t) (last - p - 1) >= value->len
                && memcmp(p + 1, value->data, value->len) == 0)
            {
                return h[i].value;
            }
        }
    }
    return none;
}


static sws_userid_ctx_t *
sws_userid_get(sws_http_request_t *r, const sws_userid_conf_t *conf)
{
    sws_userid_ctx_t  *ctx = sws_http_get_ctx(r, &sws_module);
    sws_str_t          field;
    u_char             raw[18];

    if (ctx) {
        return ctx;
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_userid_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }
    sws_http_set_ctx(r, &sws_module, ctx);

    /* $cookie_NAME: its value points into the Cookie field it is in */
    if (conf->cookie == NULL
        || sws_http_format_string(conf->cookie, r, sws_http_pool(r), 0, NULL, 0, &ctx->cookie)
           != SWS_OK || ctx->cookie.len == 0)
    {
        ctx->cookie.len = 0;
        return ctx;
    }
    /* logged at "error" as nginx 1.22 does */
    if (ctx->cookie.len < 22) {
        field = sws_userid_field(r, conf, &ctx->cookie);
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                      "client sent too short userid cookie \"%.*s\"",
                      (int) field.len, field.data);
        return ctx;
    }
    memset(raw, 0, sizeof(raw));
    if (sws_userid_decode(ctx->cookie.data, raw) != 0) {
        field = sws_userid_field(r, conf, &ctx->cookie);
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                      "client sent invalid userid cookie \"%.*s\"",
                      (int) field.len, field.data);
        return ctx;
    }
    memcpy(ctx->got, raw, 16);
    return ctx;
}


/* ---- the cookie to set ---- */

/* The server's address word: IPv4 as it is, the last four bytes of IPv6,
 * 0 for a unix socket. */
static uint32_t
sws_userid_server_word(sws_http_request_t *r)
{
    const sws_userid_main_conf_t  *mcf = sws_http_main_conf(r, &sws_module);
    sws_str_t                      addr;
    char                           buf[INET6_ADDRSTRLEN + 1];
    struct in6_addr                a6;
    struct in_addr                 a4;
    uint32_t                       w = 0;

    if (sws_http_format_string(mcf->server_addr, r, sws_http_pool(r), 0, NULL, 0, &addr)
        != SWS_OK || addr.len >= sizeof(buf))
    {
        return 0;
    }
    memcpy(buf, addr.data, addr.len);
    buf[addr.len] = '\0';
    if (inet_pton(AF_INET, buf, &a4) == 1) {
        memcpy(&w, &a4, 4);
    } else if (inet_pton(AF_INET6, buf, &a6) == 1) {
        memcpy(&w, &a6.s6_addr[12], 4);
    }
    return w;
}


static sws_int_t
sws_userid_make(sws_http_request_t *r, sws_userid_ctx_t *ctx, const sws_userid_conf_t *conf)
{
    const sws_userid_main_conf_t  *mcf = sws_http_main_conf(r, &sws_module);
    sws_str_t                      reset;
    const u_char                  *c = ctx->cookie.data;

    if (ctx->made) {
        return SWS_OK;
    }
    ctx->made = 1;

    if (ctx->got[3] != 0) {
        if (sws_http_format_string(mcf->reset, r, sws_http_pool(r), 0, NULL, 0, &reset)
            != SWS_OK)
        {
            reset.len = 0;
        }
        if (reset.len == 0 || (reset.len == 1 && reset.data[0] == '0')) {
            /* a good cookie stays; one without the mark is sent again with it */
            if (conf->mark == 0
                || (ctx->cookie.len > 23 && c[22] == conf->mark && c[23] == '='))
            {
                return SWS_OK;
            }
            memcpy(ctx->set, ctx->got, sizeof(ctx->set));
            return SWS_OK;
        }
        ctx->reset = 1;
        if (reset.len == 3 && memcmp(reset.data, "log", 3) == 0) {
            sws_log_error(SWS_LOG_NOTICE, sws_http_log(r), 0,
                          "userid cookie \"%.*s=%08X%08X%08X%08X\" was reset",
                          (int) conf->name.len, conf->name.data, ctx->got[0], ctx->got[1],
                          ctx->got[2], ctx->got[3]);
        }
    }

    if (conf->enable == SWS_USERID_V1) {
        ctx->set[0] = conf->service == SWS_UNSET ? 0 : (uint32_t) conf->service;
        ctx->set[1] = (uint32_t) sws_time_sec();
        ctx->set[2] = sws_userid_start;
        ctx->set[3] = sws_userid_seq_v1;
        sws_userid_seq_v1 += 0x100;
    } else {
        ctx->set[0] = conf->service == SWS_UNSET ? sws_userid_server_word(r)
                                                 : htonl((uint32_t) conf->service);
        ctx->set[1] = htonl((uint32_t) sws_time_sec());
        ctx->set[2] = htonl(sws_userid_start);
        ctx->set[3] = htonl(sws_userid_seq_v2);
        sws_userid_seq_v2 += 0x100;
        if (sws_userid_seq_v2 < 0x03030302) {
            sws_userid_seq_v2 = 0x03030302;
        }
    }
    return SWS_OK;
}


/* "Thu, 31-Dec-37 23:55:55 GMT": the old cookie date nginx writes (a
 * two-digit year up to 2037) */
static u_char *
sws_userid_cookie_time(u_char *p, time_t t)
{
    static const char  days[][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
    static const char  months[][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    struct tm          tm;
    int                year;

    gmtime_r(&t, &tm);
    year = tm.tm_year + 1900;
    return p + sprintf((char *) p, year > 2037 ? "%s, %02d-%s-%d %02d:%02d:%02d GMT"
                                               : "%s, %02d-%s-%02d %02d:%02d:%02d GMT",
                       days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
                       year > 2037 ? year : year % 100, tm.tm_hour, tm.tm_min, tm.tm_sec);
}


static sws_int_t
sws_userid_header_filter(sws_http_request_t *r)
{
    const sws_userid_conf_t  *conf = sws_http_loc_conf(r, &sws_module);
    sws_userid_ctx_t         *ctx;
    sws_str_t                 name, value;
    u_char                   *p;

    if (conf == NULL || conf->enable < SWS_USERID_V1) {
        return sws_userid_next_header_filter(r);
    }
    ctx = sws_userid_get(r, conf);
    if (ctx == NULL || sws_userid_make(r, ctx, conf) != SWS_OK) {
        return SWS_ERROR;
    }
    if (ctx->set[3] == 0) {
        return sws_userid_next_header_filter(r);
    }

    p = sws_pnalloc(sws_http_pool(r), conf->name.len + 1 + 24 + sizeof(sws_userid_max_expires)
                    + 8 + conf->domain.len + conf->path.len
                    + sizeof("; secure; httponly; samesite=strict"));
    if (p == NULL) {
        return SWS_ERROR;
    }
    value.data = p;
    p = sws_cpymem(p, conf->name.data, conf->name.len);
    *p++ = '=';
    if (ctx->got[3] == 0 || ctx->reset) {
        p = sws_encode_base64(p, (u_char *) ctx->set, 16);
        if (conf->mark) {
            p[-2] = (u_char) conf->mark;
        }
    } else {
        /* the client's, with the mark */
        p = sws_cpymem(p, ctx->cookie.data, 22);
        *p++ = (u_char) conf->mark;
        *p++ = '=';
    }
    if (conf->expires == SWS_USERID_EXPIRES_MAX) {
        p = sws_cpymem(p, sws_userid_max_expires, sizeof(sws_userid_max_expires) - 1);
    } else if (conf->expires > 0) {
        p = sws_cpymem(p, "; expires=", 10);
        p = sws_userid_cookie_time(p, sws_time_sec() + conf->expires);
    }
    p = sws_cpymem(p, conf->domain.data, conf->domain.len);
    p = sws_cpymem(p, conf->path.data, conf->path.len);
    if (conf->flags & SWS_USERID_SECURE) {
        p = sws_cpymem(p, "; secure", 8);
    }
    if (conf->flags & SWS_USERID_HTTPONLY) {
        p = sws_cpymem(p, "; httponly", 10);
    }
    if (conf->flags & SWS_USERID_SAMESITE_STRICT) {
        p = sws_cpymem(p, "; samesite=strict", 17);
    }
    if (conf->flags & SWS_USERID_SAMESITE_LAX) {
        p = sws_cpymem(p, "; samesite=lax", 14);
    }
    if (conf->flags & SWS_USERID_SAMESITE_NONE) {
        p = sws_cpymem(p, "; samesite=none", 15);
    }
    value.len = (size_t) (p - value.data);
    sws_str_set(&name, "Set-Cookie");
    if (sws_http_header_out_add(r, &name, &value) == NULL) {
        return SWS_ERROR;
    }
    if (conf->p3p.len) {
        sws_str_set(&name, "P3P");
        if (sws_http_header_out_add(r, &name, &conf->p3p) == NULL) {
            return SWS_ERROR;
        }
    }
    return sws_userid_next_header_filter(r);
}


/* ---- the variables ---- */

/* "NAME=" and the words in hexadecimal, as they lie in memory */
static void
sws_userid_value(sws_http_request_t *r, const sws_userid_conf_t *conf, const uint32_t *uid,
    sws_str_t *value)
{
    u_char  *p;

    p = sws_pnalloc(sws_http_pool(r), conf->name.len + 1 + 32 + 1);
    if (p == NULL) {
        return;
    }
    value->data = p;
    p = sws_cpymem(p, conf->name.data, conf->name.len);
    p += snprintf((char *) p, 34, "=%08X%08X%08X%08X", uid[0], uid[1], uid[2], uid[3]);
    value->len = (size_t) (p - value->data);
}


static void
sws_userid_got_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_userid_conf_t  *conf = sws_http_loc_conf(r, &sws_module);
    sws_userid_ctx_t         *ctx;

    (void) data;
    value->len = 0;
    value->data = NULL;
    if (conf->enable == SWS_USERID_OFF) {
        return;
    }
    ctx = sws_userid_get(r, conf);
    if (ctx && ctx->got[3] != 0) {
        sws_userid_value(r, conf, ctx->got, value);
    }
}


static void
sws_userid_set_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_userid_conf_t  *conf = sws_http_loc_conf(r, &sws_module);
    sws_userid_ctx_t         *ctx;

    (void) data;
    value->len = 0;
    value->data = NULL;
    if (conf->enable < SWS_USERID_V1) {
        return;
    }
    ctx = sws_userid_get(r, conf);
    if (ctx && sws_userid_make(r, ctx, conf) == SWS_OK && ctx->set[3] != 0) {
        sws_userid_value(r, conf, ctx->set, value);
    }
}


/* ---- configuration ---- */

static void *
sws_userid_create_main_conf(sws_conf_t *cf)
{
    sws_userid_main_conf_t  *mcf;
    sws_str_t                reset = sws_string("uid_reset"), addr = sws_string("$server_addr"),
                             reset_text = sws_string("$uid_reset");
    const char              *err;

    mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_userid_main_conf_t));
    if (mcf == NULL) {
        return NULL;
    }
    /* in every configuration, as nginx's; $uid_reset is written by "set" */
    if (sws_http_variable_add(cf, "uid_got", sws_userid_got_variable, NULL) != SWS_OK
        || sws_http_variable_add(cf, "uid_set", sws_userid_set_variable, NULL) != SWS_OK)
    {
        return NULL;
    }
    if (sws_http_variable_writable(cf, &reset) == SWS_ERROR) {
        return NULL;
    }
    mcf->reset = sws_http_format_compile(sws_conf_pool(cf), &reset_text,
                                         SWS_HTTP_ESCAPE_NONE, &err);
    mcf->server_addr = sws_http_format_compile(sws_conf_pool(cf), &addr,
                                               SWS_HTTP_ESCAPE_NONE, &err);
    return mcf->reset && mcf->server_addr ? mcf : NULL;
}


static void *
sws_userid_create_loc_conf(sws_conf_t *cf)
{
    sws_userid_conf_t  *conf;

    conf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_userid_conf_t));
    if (conf == NULL) {
        return NULL;
    }
    conf->enable = SWS_UNSET_UINT;
    conf->service = SWS_UNSET;
    conf->expires = SWS_UNSET;
    conf->mark = -1;
    return conf;
}


static void
sws_userid_merge_str(sws_str_t *conf, const sws_str_t *prev, const char *dflt)
{
    if (conf->data == NULL) {
        if (prev->data) {
            *conf = *prev;
        } else {
            conf->data = (u_char *) dflt;
            conf->len = strlen(dflt);
        }
    }
}


static char *
sws_userid_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    const sws_userid_conf_t  *prev = parent;
    sws_userid_conf_t        *conf = child;
    sws_str_t                 text;
    u_char                   *p;
    const char               *err;

    if (conf->enable == SWS_UNSET_UINT) {
        conf->enable = prev->enable == SWS_UNSET_UINT ? SWS_USERID_OFF : prev->enable;
    }
    if (conf->flags == 0) {
        conf->flags = prev->flags ? prev->flags : SWS_USERID_FLAGS_SET;
    }
    sws_userid_merge_str(&conf->name, &prev->name, "uid");
    sws_userid_merge_str(&conf->domain, &prev->domain, "");
    sws_userid_merge_str(&conf->path, &prev->path, "; path=/");
    sws_userid_merge_str(&conf->p3p, &prev->p3p, "");
    if (conf->service == SWS_UNSET) {
        conf->service = prev->service;
    }
    if (conf->expires == SWS_UNSET) {
        conf->expires = prev->expires == SWS_UNSET ? 0 : prev->expires;
    }
    if (conf->mark == -1) {
        conf->mark = prev->mark == -1 ? 0 : prev->mark;
    }

    if (conf->name.len == 0) {
        conf->cookie = NULL;            /* no cookie has an empty name */
    } else if (conf->cookie == NULL || conf->name.data != prev->name.data) {
        text.len = sizeof("$cookie_") - 1 + conf->name.len;
        text.data = p = sws_pnalloc(sws_conf_pool(cf), text.len);
        if (p == NULL) {
            return SWS_CONF_ERROR;
        }
        p = sws_cpymem(p, "$cookie_", sizeof("$cookie_") - 1);
        memcpy(p, conf->name.data, conf->name.len);
        conf->cookie = sws_http_format_compile(sws_conf_pool(cf), &text,
                                               SWS_HTTP_ESCAPE_NONE, &err);
        if (conf->cookie == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "userid_name \"%.*s\": %s",
                               (int) conf->name.len, conf->name.data, err);
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}


static char *
sws_userid_set_enable(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const char *const  names[] = { "off", "log", "v1", "on" };
    sws_userid_conf_t        *ucf = conf;
    sws_userid_main_conf_t   *mcf;
    sws_str_t                *v = sws_conf_arg(cf, 1);
    sws_uint_t                i;

    (void) cmd;
    if (ucf->enable != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    for (i = 0; i < 4; i++) {
        if (sws_str_eq_cstr(v, names[i])) {
            ucf->enable = i;
            if (i >= SWS_USERID_V1) {
                mcf = sws_conf_http_main_conf(cf, &sws_module);
                mcf->sets = 1;
            }
            return SWS_CONF_OK;
        }
    }
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"", (int) v->len, v->data);
    return SWS_CONF_ERROR;
}


static char *
sws_userid_set_service(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_userid_conf_t  *ucf = conf;
    sws_str_t          *v = sws_conf_arg(cf, 1);

    (void) cmd;
    if (ucf->service != SWS_UNSET) {
        return "is duplicate";
    }
    ucf->service = sws_atoi(v->data, v->len);
    if (ucf->service == SWS_ERROR) {
        return "invalid number";
    }
    return SWS_CONF_OK;
}


/* userid_name NAME, userid_domain NAME|none, userid_path PATH,
 * userid_p3p TEXT|none: kept as the cookie's text needs them */
static char *
sws_userid_set_text(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const char *const  prefix[] = { "", "; domain=", "; path=", "" };
    sws_userid_conf_t        *ucf = conf;
    sws_str_t                *field, *v = sws_conf_arg(cf, 1);
    size_t                    plen;
    u_char                   *p;

    switch (cmd->offset) {
    case SWS_USERID_NAME:   field = &ucf->name; break;
    case SWS_USERID_DOMAIN: field = &ucf->domain; break;
    case SWS_USERID_PATH:   field = &ucf->path; break;
    default:                field = &ucf->p3p; break;
    }
    if (field->data) {
        return "is duplicate";
    }
    if ((cmd->offset == SWS_USERID_DOMAIN || cmd->offset == SWS_USERID_P3P)
        && sws_str_eq_cstr(v, "none"))
    {
        field->data = (u_char *) "";
        field->len = 0;
        return SWS_CONF_OK;
    }
    plen = strlen(prefix[cmd->offset]);
    p = sws_pnalloc(sws_conf_pool(cf), plen + v->len + 1);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    field->data = p;
    field->len = plen + v->len;
    p = sws_cpymem(p, prefix[cmd->offset], plen);
    memcpy(p, v->data, v->len);
    return SWS_CONF_OK;
}


static char *
sws_userid_set_expires(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_userid_conf_t  *ucf = conf;
    sws_str_t          *v = sws_conf_arg(cf, 1);
    sws_msec_t          ms;

    (void) cmd;
    if (ucf->expires != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(v, "max")) {
        ucf->expires = SWS_USERID_EXPIRES_MAX;
        return SWS_CONF_OK;
    }
    if (sws_str_eq_cstr(v, "off")) {
        ucf->expires = 0;
        return SWS_CONF_OK;
    }
    /* seconds: no "ms" */
    ms = sws_parse_time_ms(v);
    if (ms < 0 || (v->len >= 2 && v->data[v->len - 1] == 's' && v->data[v->len - 2] == 'm')) {
        return "invalid value";
    }
    ucf->expires = (time_t) (ms / 1000);
    return SWS_CONF_OK;
}


static char *
sws_userid_set_flags(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const struct { const char *name; sws_uint_t mask; }  flags[] = {
        { "off", SWS_USERID_FLAGS_SET }, { "secure", SWS_USERID_SECURE },
        { "httponly", SWS_USERID_HTTPONLY },
        { "samesite=strict", SWS_USERID_SAMESITE_STRICT },
        { "samesite=lax", SWS_USERID_SAMESITE_LAX },
        { "samesite=none", SWS_USERID_SAMESITE_NONE },
    };
    sws_userid_conf_t  *ucf = conf;
    sws_str_t          *v;
    sws_uint_t          i, k, n = sws_conf_nargs(cf);

    (void) cmd;
    ucf->flags |= SWS_USERID_FLAGS_SET;
    for (i = 1; i < n; i++) {
        v = sws_conf_arg(cf, i);
        for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
            if (strlen(flags[k].name) == v->len
                && sws_strncasecmp(v->data, (u_char *) flags[k].name, v->len) == 0)
            {
                break;
            }
        }
        if (k == sizeof(flags) / sizeof(flags[0])) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"",
                               (int) v->len, v->data);
            return SWS_CONF_ERROR;
        }
        if (flags[k].mask != SWS_USERID_FLAGS_SET && (ucf->flags & flags[k].mask)) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "duplicate value \"%.*s\"",
                               (int) v->len, v->data);
        }
        ucf->flags |= flags[k].mask;
    }
    return SWS_CONF_OK;
}


static char *
sws_userid_set_mark(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_userid_conf_t  *ucf = conf;
    sws_str_t          *v = sws_conf_arg(cf, 1);
    u_char              c;

    (void) cmd;
    if (ucf->mark != -1) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(v, "off")) {
        ucf->mark = 0;
        return SWS_CONF_OK;
    }
    c = v->len == 1 ? v->data[0] : 0;
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
          || c == '='))
    {
        return "value must be \"off\" or a single letter, digit or \"=\"";
    }
    ucf->mark = c;
    return SWS_CONF_OK;
}


/* Where userid is on or v1 somewhere: a filter that sets the cookie. */
static int
sws_userid_acts(sws_http_request_t *r)
{
    const sws_userid_conf_t  *conf = sws_http_loc_conf(r, &sws_module);

    return conf != NULL && conf->enable >= SWS_USERID_V1;
}


/* The filter only in a configuration that sets cookies somewhere: where
 * no level has "userid on" or "v1" it would cost every response a call. */
static sws_int_t
sws_userid_init(sws_conf_t *cf)
{
    const sws_userid_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    if (mcf == NULL || !mcf->sets) {
        return SWS_OK;
    }
    sws_userid_next_header_filter = sws_http_insert_header_filter(sws_userid_header_filter);
    return sws_http_filters_act_when(cf, sws_userid_acts);
}


/* nginx's worker value: the start's microseconds / 20 and the pid */
static sws_int_t
sws_userid_init_worker(sws_cycle_t *cycle)
{
    struct timeval  tv;

    (void) cycle;
    gettimeofday(&tv, NULL);
    sws_userid_start = ((uint32_t) tv.tv_usec / 20) << 16 | (uint32_t) getpid();
    return SWS_OK;
}
