/*
 * geo [$address] $var { default V; CIDR V; delete CIDR; proxy CIDR;
 *                       proxy_recursive; ranges; include FILE; }
 *
 * As nginx: $var is the value of the most specific network that holds the
 * client's address (or the address in $address: text with variables), else
 * default (empty without one). With "ranges" the entries are IPv4 ranges
 * "a.b.c.d-e.f.g.h V" (a later range wins where two overlap, with a
 * warning). A client in a "proxy" network is taken from the last address
 * of X-Forwarded-For (with proxy_recursive: the last one not itself a
 * proxy). Values are plain text. The variable is evaluated when first read
 * in a request, and kept.
 */
#include <stdlib.h>
#include <arpa/inet.h>
#include <scalws/scalws.h>

typedef struct {
    sws_cidr_t   net;
    sws_str_t    value;
} sws_geo_net_t;

typedef struct {
    uint32_t     start;           /* host order, inclusive */
    uint32_t     end;
    sws_str_t    value;
} sws_geo_range_t;

typedef struct {
    sws_http_format_t  *source;   /* $address; NULL: the client */
    sws_array_t         nets;     /* sws_geo_net_t, most specific first once read */
    sws_array_t         ranges;   /* sws_geo_range_t, by start once read */
    sws_array_t         proxies;  /* sws_cidr_t */
    sws_str_t           deflt;
    unsigned            ranges_mode:1;
    unsigned            overlaps:1;      /* ranges overlap: searched in order */
    unsigned            proxy_recursive:1;
    unsigned            entries:1;       /* an address entry was read */
} sws_geo_t;

static char *sws_geo_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_command_t sws_geo_commands[] = {
    { "geo", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE12, sws_geo_block,
      0, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "geo",
    .commands = sws_geo_commands,
};


/* ---- the variable ---------------------------------------------------- */

static int
sws_geo_is_proxy(const sws_geo_t *geo, int family, const uint8_t *addr)
{
    const sws_cidr_t  *c = geo->proxies.elts;
    sws_uint_t         i;

    for (i = 0; i < geo->proxies.nelts; i++) {
        if (sws_cidr_match(&c[i], family, addr)) {
            return 1;
        }
    }
    return 0;
}

/* The client behind trusted proxies: X-Forwarded-For from the right. */
static int
sws_geo_forwarded(sws_http_request_t *r, const sws_geo_t *geo, int family, uint8_t *addr)
{
    const sws_str_t  *xff = sws_http_header_in(r, "x-forwarded-for", 15);
    const u_char     *p, *end, *s, *e;
    uint8_t           a[16];
    int               f;

    if (xff == NULL) {
        return family;
    }
    end = xff->data + xff->len;
    while (end > xff->data) {
        for (p = end; p > xff->data && p[-1] != ','; p--) { }
        for (s = p; s < end && (*s == ' ' || *s == '\t'); s++) { }
        for (e = end; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--) { }
        end = p > xff->data ? p - 1 : p;
        f = sws_cidr_addr_text(s, (size_t) (e - s), a);
        if (f != AF_INET && f != AF_INET6) {
            break;                          /* garbage: the last good one stays */
        }
        family = f;
        memcpy(addr, a, 16);
        if (!geo->proxy_recursive || !sws_geo_is_proxy(geo, family, addr)) {
            break;
        }
    }
    return family;
}

static const sws_str_t *
sws_geo_find(const sws_geo_t *geo, int family, const uint8_t *addr)
{
    const sws_geo_net_t    *n = geo->nets.elts;
    const sws_geo_range_t  *rg = geo->ranges.elts;
    sws_uint_t              i, lo, hi, mid;
    uint32_t                a;

    if (!geo->ranges_mode) {
        for (i = 0; i < geo->nets.nelts; i++) {      /* most specific first */
            if (sws_cidr_match(&n[i].net, family, addr)) {
                return &n[i].value;
            }
        }
        return &geo->deflt;
    }
    if (family != AF_INET) {
        return &geo->deflt;
    }
    a = ((uint32_t) addr[0] << 24) | ((uint32_t) addr[1] << 16)
        | ((uint32_t) addr[2] << 8) | addr[3];
    if (geo->overlaps) {
        for (i = geo->ranges.nelts; i-- > 0; ) {     /* the later wins */
            if (a >= rg[i].start && a <= rg[i].end) {
                return &rg[i].value;
            }
        }
        return &geo->deflt;
    }
    lo = 0;
    hi = geo->ranges.nelts;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (a < rg[mid].start) {
            hi = mid;
        } else if (a > rg[mid].end) {
            lo = mid + 1;
        } else {
            return &rg[mid].value;
        }
    }
    return &geo->deflt;
}

static void
sws_geo_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    sws_geo_t  *geo = data;
    uint8_t     addr[16];
    socklen_t   len;
    sws_str_t   text;
    int         family;

    if (geo->source) {
        if (sws_http_format_string(geo->source, r, sws_http_pool(r), 0, NULL, 0, &text)
            != SWS_OK)
        {
            value->len = 0;
            return;
        }
        family = sws_cidr_addr_text(text.data, text.len, addr);
    } else {
        family = sws_cidr_addr(sws_http_remote_sockaddr(r, &len), addr);
    }
    if (geo->proxies.nelts && sws_geo_is_proxy(geo, family, addr)) {
        family = sws_geo_forwarded(r, geo, family, addr);
    }
    *value = *sws_geo_find(geo, family, addr);
}


/* ---- the block ------------------------------------------------------- */

static sws_int_t
sws_geo_ipv4(const sws_str_t *text, size_t off, size_t len, uint32_t *out)
{
    char      buf[INET_ADDRSTRLEN];
    uint8_t   a[4];

    if (len == 0 || len >= sizeof(buf)) {
        return SWS_ERROR;
    }
    memcpy(buf, text->data + off, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, a) != 1) {
        return SWS_ERROR;
    }
    *out = ((uint32_t) a[0] << 24) | ((uint32_t) a[1] << 16) | ((uint32_t) a[2] << 8) | a[3];
    return SWS_OK;
}

static char *
sws_geo_cidr(sws_conf_t *cf, const sws_str_t *arg, sws_cidr_t *c)
{
    switch (sws_cidr_parse(arg->data, arg->len, 0, c)) {
    case SWS_OK:
        return SWS_CONF_OK;
    case SWS_DONE:
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "low address bits of %.*s are meaningless",
                           (int) arg->len, arg->data);
        return SWS_CONF_OK;
    }
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid network \"%.*s\"", (int) arg->len,
                       arg->data);
    return SWS_CONF_ERROR;
}

static char *
sws_geo_range(sws_conf_t *cf, sws_geo_t *geo, const sws_str_t *key, const sws_str_t *value)
{
    sws_geo_range_t  *rg;
    u_char           *dash = memchr(key->data, '-', key->len);
    size_t            d;

    rg = sws_array_push(&geo->ranges);
    if (rg == NULL) {
        return SWS_CONF_ERROR;
    }
    d = dash ? (size_t) (dash - key->data) : key->len;
    if (sws_geo_ipv4(key, 0, d, &rg->start) != SWS_OK
        || (dash ? sws_geo_ipv4(key, d + 1, key->len - d - 1, &rg->end)
                 : (rg->end = rg->start, SWS_OK)) != SWS_OK
        || rg->end < rg->start)
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid range \"%.*s\"", (int) key->len,
                           key->data);
        return SWS_CONF_ERROR;
    }
    rg->value = *value;
    return SWS_CONF_OK;
}

static char *
sws_geo_entry(sws_conf_t *cf, void *data)
{
    sws_geo_t      *geo = data;
    sws_str_t      *key = sws_conf_arg(cf, 0), *value;
    sws_uint_t      n = sws_conf_nargs(cf), i;
    sws_geo_net_t  *gn;
    sws_cidr_t      c, *pc;

    if (n == 1 && sws_str_eq_cstr(key, "ranges")) {
        if (geo->entries) {
            return "\"ranges\" must come before the addresses";
        }
        geo->ranges_mode = 1;
        return SWS_CONF_OK;
    }
    if (n == 1 && sws_str_eq_cstr(key, "proxy_recursive")) {
        geo->proxy_recursive = 1;
        return SWS_CONF_OK;
    }
    if (n != 2) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid number of the geo parameters "
                           "in \"%.*s\"", (int) key->len, key->data);
        return SWS_CONF_ERROR;
    }
    value = sws_conf_arg(cf, 1);
    if (sws_str_eq_cstr(key, "default")) {
        geo->deflt = *value;
        return SWS_CONF_OK;
    }
    if (sws_str_eq_cstr(key, "proxy")) {
        pc = sws_array_push(&geo->proxies);
        return pc == NULL ? SWS_CONF_ERROR : sws_geo_cidr(cf, value, pc);
    }
    if (sws_str_eq_cstr(key, "delete")) {
        if (geo->ranges_mode) {
            return "\"delete\" is not supported with \"ranges\"";
        }
        if (sws_geo_cidr(cf, value, &c) != SWS_CONF_OK) {
            return SWS_CONF_ERROR;
        }
        gn = geo->nets.elts;
        for (i = 0; i < geo->nets.nelts; i++) {
            if (gn[i].net.family == c.family && gn[i].net.bits == c.bits
                && memcmp(gn[i].net.addr, c.addr, 16) == 0)
            {
                gn[i] = gn[--geo->nets.nelts];
                return SWS_CONF_OK;
            }
        }
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "no network \"%.*s\" to delete",
                           (int) value->len, value->data);
        return SWS_CONF_OK;
    }
    geo->entries = 1;
    if (geo->ranges_mode) {
        return sws_geo_range(cf, geo, key, value);
    }
    if (sws_geo_cidr(cf, key, &c) != SWS_CONF_OK) {
        return SWS_CONF_ERROR;
    }
    gn = geo->nets.elts;
    for (i = 0; i < geo->nets.nelts; i++) {
        if (gn[i].net.family == c.family && gn[i].net.bits == c.bits
            && memcmp(gn[i].net.addr, c.addr, 16) == 0)
        {
            /* as nginx: the later value, with a warning */
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "duplicate network \"%.*s\", value: "
                               "\"%.*s\", old value: \"%.*s\"", (int) key->len, key->data,
                               (int) value->len, value->data, (int) gn[i].value.len,
                               gn[i].value.data);
            gn[i].value = *value;
            return SWS_CONF_OK;
        }
    }
    gn = sws_array_push(&geo->nets);
    if (gn == NULL) {
        return SWS_CONF_ERROR;
    }
    gn->net = c;
    gn->value = *value;
    return SWS_CONF_OK;
}

static int
sws_geo_cmp_nets(const void *a, const void *b)
{
    const sws_geo_net_t *x = a, *y = b;

    return (int) y->net.bits - (int) x->net.bits;      /* longer prefixes first */
}

static int
sws_geo_cmp_ranges(const void *a, const void *b)
{
    const sws_geo_range_t *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

static char *
sws_geo_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_geo_t        *geo;
    sws_str_t        *var, *src = NULL;
    sws_geo_range_t  *rg;
    sws_uint_t        i;
    size_t            n;
    const char       *err = NULL;
    char             *name, *rv;
    sws_pool_t       *pool = sws_conf_pool(cf);

    (void) cmd;
    (void) conf;
    geo = sws_pcalloc(pool, sizeof(sws_geo_t));
    if (geo == NULL
        || sws_array_init(&geo->nets, pool, 16, sizeof(sws_geo_net_t)) != SWS_OK
        || sws_array_init(&geo->ranges, pool, 4, sizeof(sws_geo_range_t)) != SWS_OK
        || sws_array_init(&geo->proxies, pool, 2, sizeof(sws_cidr_t)) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    var = sws_conf_arg(cf, sws_conf_nargs(cf) - 1);
    if (sws_conf_nargs(cf) == 3) {
        src = sws_conf_arg(cf, 1);
    }
    if (var->len < 2 || var->data[0] != '$') {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid variable name \"%.*s\": it must "
                           "start with \"$\"", (int) var->len, var->data);
        return SWS_CONF_ERROR;
    }
    if (src) {
        geo->source = sws_http_format_compile(pool, src, SWS_HTTP_ESCAPE_NONE, &err);
        if (geo->source == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err ? err : "invalid address");
            return SWS_CONF_ERROR;
        }
    }
    rv = sws_conf_parse_entries(cf, sws_geo_entry, geo);
    if (rv != SWS_CONF_OK) {
        return rv;
    }

    /* the most specific network first; ranges by start, to be searched */
    qsort(geo->nets.elts, geo->nets.nelts, sizeof(sws_geo_net_t), sws_geo_cmp_nets);
    if (geo->ranges.nelts > 1) {
        n = geo->ranges.nelts * sizeof(sws_geo_range_t);
        rg = sws_pnalloc(pool, n);
        if (rg == NULL) {
            return SWS_CONF_ERROR;
        }
        memcpy(rg, geo->ranges.elts, n);
        qsort(rg, geo->ranges.nelts, sizeof(sws_geo_range_t), sws_geo_cmp_ranges);
        for (i = 1; i < geo->ranges.nelts && !geo->overlaps; i++) {
            geo->overlaps = rg[i].start <= rg[i - 1].end;
        }
        if (geo->overlaps) {
            /* kept in the order written, searched from the end */
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "geo \"%.*s\": ranges overlap: where "
                               "they do, the later one wins", (int) var->len, var->data);
        } else {
            memcpy(geo->ranges.elts, rg, n);        /* by start: a binary search */
        }
    }

    name = sws_pnalloc(pool, var->len);
    if (name == NULL) {
        return SWS_CONF_ERROR;
    }
    memcpy(name, var->data + 1, var->len - 1);
    name[var->len - 1] = '\0';
    return sws_http_variable_add_cached(cf, name, sws_geo_variable, geo, 0) == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}
