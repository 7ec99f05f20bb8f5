/*
 * The realip module: the client's address from a trusted proxy's header.
 *
 *   set_real_ip_from ADDRESS[/BITS] | unix:;    (http, server, location; repeatable)
 *   real_ip_header X-Real-IP | X-Forwarded-For | proxy_protocol | NAME;
 *   real_ip_recursive on | off;
 *   $realip_remote_addr, $realip_remote_port: the connection's own peer
 *
 * When the peer is trusted, the address its header names becomes the
 * request's client (sws_http_set_remote_addr): $remote_addr, the access
 * log, allow/deny, limit_req and limit_conn keys and proxy's
 * X-Forwarded-For see it. A header is a list (X-Forwarded-For: every field
 * of the name, joined): the last entry is taken, and with
 * real_ip_recursive on, entries go on being taken from the right as long
 * as the one taken so far is trusted too. proxy_protocol takes the PROXY
 * protocol header's client address and port.
 *
 * As in nginx, the server's settings apply first (POST_READ phase); if
 * they changed nothing, the location's are tried in its PREACCESS phase,
 * before limit_req, limit_conn and the access checks. Once per request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <scalws/scalws.h>

typedef struct {
    sws_array_t       *from;         /* sws_cidr_t */
    sws_str_t          header;       /* lower case; "x-real-ip" by default */
    sws_int_t          proxy_protocol;
    sws_int_t          recursive;
} sws_realip_loc_conf_t;

/* Once the address was changed: the connection's own. */
typedef struct {
    sws_str_t          addr;
    sws_str_t          port;
} sws_realip_ctx_t;

static char *sws_realip_from(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_realip_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_realip_create_main_conf(sws_conf_t *cf);
static void *sws_realip_create_loc_conf(sws_conf_t *cf);
static char *sws_realip_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_realip_init(sws_conf_t *cf);

#define SWS_REALIP_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_realip_commands[] = {
    { "set_real_ip_from", SWS_REALIP_HTTP | SWS_CONF_TAKE1, sws_realip_from,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "real_ip_header", SWS_REALIP_HTTP | SWS_CONF_TAKE1, sws_realip_header,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "real_ip_recursive", SWS_REALIP_HTTP | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_realip_loc_conf_t, recursive), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "realip",
    .commands = sws_realip_commands,
    .create_main_conf = sws_realip_create_main_conf,
    .create_loc_conf = sws_realip_create_loc_conf,
    .merge_loc_conf = sws_realip_merge_loc_conf,
    .postconfiguration = sws_realip_init,
};


/* ---- addresses ------------------------------------------------------- */

static int
sws_realip_trusted(const sws_realip_loc_conf_t *lcf, const struct sockaddr *sa)
{
    const sws_cidr_t  *c = lcf->from->elts;
    uint8_t            addr[16];
    int                family = sws_cidr_addr(sa, addr);
    sws_uint_t         i;

    for (i = 0; i < lcf->from->nelts; i++) {
        if (sws_cidr_match(&c[i], family, addr)) {
            return 1;
        }
    }
    return 0;
}

/* One entry of a header: "1.2.3.4", "1.2.3.4:80", "2001:db8::1",
 * "[2001:db8::1]:80". 0 and ss filled, or -1. */
static int
sws_realip_parse(const u_char *p, size_t len, struct sockaddr_storage *ss, socklen_t *sl)
{
    char                  text[INET6_ADDRSTRLEN + 8];
    const u_char         *colon, *end = p + len, *port = NULL;
    struct sockaddr_in   *sin = (struct sockaddr_in *) ss;
    struct sockaddr_in6  *sin6 = (struct sockaddr_in6 *) ss;
    size_t                alen = len;
    unsigned long         pv = 0;

    if (len == 0 || len >= sizeof(text)) {
        return -1;
    }
    if (p[0] == '[') {
        colon = memchr(p, ']', len);
        if (colon == NULL) {
            return -1;
        }
        p++;
        alen = (size_t) (colon - p);
        if (colon + 1 < end) {
            if (colon[1] != ':') {
                return -1;
            }
            port = colon + 2;
        }
    } else if ((colon = memchr(p, ':', len)) != NULL && memchr(colon + 1, ':', end - colon - 1) == NULL) {
        alen = (size_t) (colon - p);          /* one colon: IPv4 with a port */
        port = colon + 1;
    }
    if (port) {
        if (port == end || end - port > 5) {
            return -1;
        }
        for (; port < end; port++) {
            if (*port < '0' || *port > '9') {
                return -1;
            }
            pv = pv * 10 + (unsigned long) (*port - '0');
        }
        if (pv > 65535) {
            return -1;
        }
    }
    memcpy(text, p, alen);
    text[alen] = '\0';
    sws_memzero(ss, sizeof(*ss));
    if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t) pv);
        *sl = sizeof(struct sockaddr_in);
        return 0;
    }
    if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t) pv);
        *sl = sizeof(struct sockaddr_in6);
        return 0;
    }
    return -1;
}

/* The client named by list (comma-separated), the peer being trusted:
 * taken from the right. 0 with ss set, or -1: nothing usable. */
static int
sws_realip_from_list(const sws_realip_loc_conf_t *lcf, const u_char *list, size_t len,
    struct sockaddr_storage *ss, socklen_t *sl)
{
    const u_char            *end = list + len, *p, *s;
    struct sockaddr_storage  next;
    socklen_t                nl;
    int                      found = 0;

    while (end > list) {
        /* the last entry: after the last comma, spaces trimmed */
        for (p = end; p > list && p[-1] != ','; p--) { }
        for (s = p; s < end && (*s == ' ' || *s == '\t'); s++) { }
        while (end > s && (end[-1] == ' ' || end[-1] == '\t')) {
            end--;
        }
        if (end == s && p > list) {
            end = p - 1;                      /* an empty entry: skip it */
            continue;
        }
        if (sws_realip_parse(s, (size_t) (end - s), &next, &nl) != 0) {
            break;                            /* what was found so far stands */
        }
        memcpy(ss, &next, nl);
        *sl = nl;
        found = 1;
        if (!lcf->recursive || !sws_realip_trusted(lcf, (struct sockaddr *) ss)) {
            break;
        }
        end = p > list ? p - 1 : list;
    }
    return found ? 0 : -1;
}

/* All the fields called name, joined with ", " (X-Forwarded-For may come
 * as several). */
static sws_int_t
sws_realip_header_value(sws_http_request_t *r, const sws_str_t *name, sws_str_t *v)
{
    const sws_array_t        *hs = sws_http_headers_in(r);
    const sws_http_header_t  *h = hs->elts;
    sws_uint_t                i, n = 0;
    size_t                    len = 0;
    u_char                   *p;

    for (i = 0; i < hs->nelts; i++) {
        if (h[i].hash && h[i].name.len == name->len
            && memcmp(h[i].name.data, name->data, name->len) == 0)
        {
            len += h[i].value.len + 2;
            n++;
            *v = h[i].value;
        }
    }
    if (n <= 1) {
        return n ? SWS_OK : SWS_DECLINED;
    }
    p = sws_pnalloc(sws_http_pool(r), len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    v->data = p;
    for (i = 0; i < hs->nelts; i++) {
        if (h[i].hash && h[i].name.len == name->len
            && memcmp(h[i].name.data, name->data, name->len) == 0)
        {
            if (p != v->data) {
                *p++ = ',';
                *p++ = ' ';
            }
            p = sws_cpymem(p, h[i].value.data, h[i].value.len);
        }
    }
    v->len = (size_t) (p - v->data);
    return SWS_OK;
}


/* ---- the phases ------------------------------------------------------ */

static sws_int_t
sws_realip_apply(sws_http_request_t *r, sws_realip_loc_conf_t *lcf)
{
    const struct sockaddr   *peer, *pp;
    struct sockaddr_storage  ss;
    socklen_t                sl, pl;
    sws_realip_ctx_t        *ctx;
    sws_str_t                v;
    u_char                   num[8];
    sws_int_t                rc;

    if (lcf->from == NULL || sws_http_get_ctx(r, &sws_module) != NULL) {
        return SWS_DECLINED;
    }
    peer = sws_http_remote_sockaddr(r, NULL);
    if (peer == NULL || !sws_realip_trusted(lcf, peer)) {
        return SWS_DECLINED;
    }
    if (lcf->proxy_protocol) {
        pp = sws_http_proxy_protocol_addr(r, 0, &pl);
        if (pp == NULL) {
            return SWS_DECLINED;
        }
        memcpy(&ss, pp, pl);
        sl = pl;
    } else {
        rc = sws_realip_header_value(r, &lcf->header, &v);
        if (rc == SWS_ERROR) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (rc != SWS_OK || sws_realip_from_list(lcf, v.data, v.len, &ss, &sl) != 0) {
            return SWS_DECLINED;
        }
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_realip_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    /* the connection's own, for $realip_remote_addr / _port */
    v = *sws_http_remote_addr(r);
    ctx->addr.data = sws_pstrdup(sws_http_pool(r), &v);
    ctx->addr.len = v.len;
    if (peer->sa_family == AF_INET || peer->sa_family == AF_INET6) {
        in_port_t port = peer->sa_family == AF_INET
                         ? ((const struct sockaddr_in *) peer)->sin_port
                         : ((const struct sockaddr_in6 *) peer)->sin6_port;
        v.data = num;
        v.len = (size_t) (sws_sprint_uint(num, ntohs(port)) - num);
        ctx->port.data = sws_pstrdup(sws_http_pool(r), &v);
        ctx->port.len = v.len;
    }
    if (ctx->addr.data == NULL
        || sws_http_set_remote_addr(r, (struct sockaddr *) &ss, sl) != SWS_OK)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    return SWS_DECLINED;
}

static sws_int_t
sws_realip_post_read(sws_http_request_t *r)
{
    return sws_realip_apply(r, sws_http_loc_conf(r, &sws_module));
}

static sws_int_t
sws_realip_location(sws_http_request_t *r)
{
    /* after an internal redirect the address is the changed one already */
    if (sws_http_is_internal(r)) {
        return SWS_DECLINED;
    }
    return sws_realip_apply(r, sws_http_loc_conf(r, &sws_module));
}

static void
sws_realip_var(sws_http_request_t *r, void *data, sws_str_t *v)
{
    sws_realip_ctx_t      *ctx = sws_http_get_ctx(r, &sws_module);
    const struct sockaddr *sa;
    u_char                *p;
    in_port_t              port;

    if (ctx) {
        *v = data ? ctx->port : ctx->addr;
        return;
    }
    if (data == NULL) {
        *v = *sws_http_remote_addr(r);
        return;
    }
    sa = sws_http_remote_sockaddr(r, NULL);
    if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
        return;
    }
    port = sa->sa_family == AF_INET ? ((const struct sockaddr_in *) sa)->sin_port
                                    : ((const struct sockaddr_in6 *) sa)->sin6_port;
    p = sws_pnalloc(sws_http_pool(r), 8);
    if (p) {
        v->data = p;
        v->len = (size_t) (sws_sprint_uint(p, ntohs(port)) - p);
    }
}


/* ---- configuration --------------------------------------------------- */

static char *
sws_realip_from(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_realip_loc_conf_t *lcf = conf;
    sws_cidr_t            *c;
    sws_str_t             *arg = sws_conf_arg(cf, 1);

    (void) cmd;
    if (lcf->from == NULL) {
        lcf->from = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_cidr_t));
        if (lcf->from == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    c = sws_array_push(lcf->from);
    if (c == NULL) {
        return SWS_CONF_ERROR;
    }
    switch (sws_cidr_parse(arg->data, arg->len, SWS_CIDR_UNIX, c)) {
    case SWS_OK:
        return SWS_CONF_OK;
    case SWS_DONE:
        /* as nginx: the host bits are dropped, with a warning */
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "low address bits of %.*s are meaningless",
                           (int) arg->len, arg->data);
        return SWS_CONF_OK;
    }
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}

static char *
sws_realip_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_realip_loc_conf_t *lcf = conf;
    sws_str_t             *arg = sws_conf_arg(cf, 1);
    size_t                 i;

    (void) cmd;
    if (lcf->header.data || lcf->proxy_protocol != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(arg, "proxy_protocol")) {
        lcf->proxy_protocol = 1;
        return SWS_CONF_OK;
    }
    for (i = 0; i < arg->len; i++) {
        u_char ch = arg->data[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
              || ch == '-' || ch == '_'))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid header name \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
    }
    lcf->header.data = sws_pnalloc(sws_conf_pool(cf), arg->len);
    if (lcf->header.data == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_strlow(lcf->header.data, arg->data, arg->len);   /* names arrive lower-cased */
    lcf->header.len = arg->len;
    lcf->proxy_protocol = 0;
    return SWS_CONF_OK;
}

static void *
sws_realip_create_main_conf(sws_conf_t *cf)
{
    static int  port;
    void       *mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_int_t));

    if (mcf == NULL
        || sws_http_variable_add(cf, "realip_remote_addr", sws_realip_var, NULL) != SWS_OK
        || sws_http_variable_add(cf, "realip_remote_port", sws_realip_var, &port) != SWS_OK)
    {
        return NULL;
    }
    return mcf;
}

static void *
sws_realip_create_loc_conf(sws_conf_t *cf)
{
    sws_realip_loc_conf_t *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_realip_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }
    lcf->proxy_protocol = SWS_UNSET;
    lcf->recursive = SWS_UNSET;
    return lcf;
}

static char *
sws_realip_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_realip_loc_conf_t *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_ptr_value(conf->from, prev->from, NULL);
    if (conf->proxy_protocol == SWS_UNSET) {
        conf->proxy_protocol = prev->proxy_protocol;
        conf->header = prev->header;
    }
    if (conf->proxy_protocol == SWS_UNSET) {
        conf->proxy_protocol = 0;
        sws_str_set(&conf->header, "x-real-ip");
    }
    sws_conf_merge_value(conf->recursive, prev->recursive, 0);
    return SWS_CONF_OK;
}

/* Only where set_real_ip_from is written (here or above). */
static sws_uint_t
sws_realip_active(const void *conf)
{
    const sws_realip_loc_conf_t *lcf = conf;

    return lcf->from != NULL && lcf->from->nelts > 0;
}

static sws_int_t
sws_realip_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t server = {
        .phase = SWS_HTTP_POST_READ_PHASE, .order = SWS_HTTP_ORDER_REALIP,
        .handler = sws_realip_post_read, .module = &sws_module, .active = sws_realip_active
    };
    sws_http_phase_handler_t location = {
        .phase = SWS_HTTP_PREACCESS_PHASE, .order = SWS_HTTP_ORDER_REALIP,
        .handler = sws_realip_location, .module = &sws_module, .active = sws_realip_active
    };

    if (sws_http_register_phase_handler(cf, &server) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_http_register_phase_handler(cf, &location);
}
