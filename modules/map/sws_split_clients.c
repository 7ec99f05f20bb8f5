/*
 * split_clients STRING $var { 10% a; 20.5% b; * c; }
 *
 * As nginx, so that the same STRING falls into the same part: STRING
 * (text with variables) is hashed with MurmurHash2 (32 bits, seed 0), and
 * the parts take consecutive ranges of the hash, each its percentage of
 * 2^32 - 1 (two decimals), in order; "*" takes the rest. Past the last
 * part (percentages under 100 and no "*") the value is empty.
 */
#include "sws_map.h"

typedef struct {
    uint32_t             bound;      /* hash < bound; 0 for "*" */
    sws_map_value_t     *value;
} sws_split_part_t;

typedef struct {
    sws_http_format_t   *source;
    sws_array_t         *parts;      /* sws_split_part_t */
    uint32_t             last;       /* the sum of the bounds so far */
    sws_uint_t           sum;        /* percent * 100 so far */
    unsigned             star:1;
} sws_split_t;


/* MurmurHash2 by Austin Appleby (public domain), 32 bits, seed 0, read
 * little-endian four bytes at a time, as nginx's ngx_murmur_hash2. */
uint32_t
sws_murmur_hash2(const u_char *data, size_t len)
{
    const uint32_t  m = 0x5bd1e995;
    uint32_t        h = 0 ^ (uint32_t) len, k;

    while (len >= 4) {
        k = (uint32_t) data[0] | (uint32_t) data[1] << 8 | (uint32_t) data[2] << 16
            | (uint32_t) data[3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
        data += 4;
        len -= 4;
    }
    switch (len) {
    case 3:
        h ^= (uint32_t) data[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t) data[1] << 8;
        /* fall through */
    case 1:
        h ^= data[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}


static void
sws_split_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    sws_split_t             *sc = data;
    const sws_split_part_t  *part = sc->parts->elts;
    sws_str_t                text;
    uint32_t                 hash;
    sws_uint_t               i;

    value->len = 0;
    value->data = NULL;
    if (sws_http_format_string(sc->source, r, sws_http_pool(r), 0, NULL, 0, &text) != SWS_OK) {
        return;
    }
    hash = sws_murmur_hash2(text.data, text.len);
    for (i = 0; i < sc->parts->nelts; i++) {
        if (part[i].bound == 0 || hash < part[i].bound) {
            if (sws_map_value_get(r, part[i].value, value) != SWS_OK) {
                value->len = 0;
            }
            return;
        }
    }
}


/* "10%", "20.5%", "0.01%": percent * 100; -1 if invalid. */
static sws_int_t
sws_split_percent(const sws_str_t *v)
{
    sws_int_t   n = 0;
    size_t      i, end;
    int         dot = 0, decimals = 0;

    if (v->len < 2 || v->data[v->len - 1] != '%') {
        return -1;
    }
    end = v->len - 1;
    for (i = 0; i < end; i++) {
        if (v->data[i] == '.' && !dot && i > 0) {
            dot = 1;
            continue;
        }
        if (v->data[i] < '0' || v->data[i] > '9' || (dot && ++decimals > 2)) {
            return -1;
        }
        n = n * 10 + (v->data[i] - '0');
        if (n > 1000000) {
            return -1;
        }
    }
    if (dot && decimals == 0) {
        return -1;
    }
    while (decimals++ < 2) {
        n *= 10;
    }
    return n;
}

static char *
sws_split_entry(sws_conf_t *cf, void *data)
{
    sws_split_t       *sc = data;
    sws_split_part_t  *part;
    sws_str_t         *pct = sws_conf_arg(cf, 0);
    sws_int_t          n;

    if (sws_conf_nargs(cf) != 2) {
        return "invalid split_clients part: a percentage (or \"*\") and a value";
    }
    if (sc->star) {
        return "\"*\" must be the last split_clients part";
    }
    part = sws_array_push(sc->parts);
    if (part == NULL) {
        return SWS_CONF_ERROR;
    }
    part->value = sws_map_value_compile(cf, sws_conf_arg(cf, 1));
    if (part->value == NULL) {
        return SWS_CONF_ERROR;
    }
    if (sws_str_eq_cstr(pct, "*")) {
        sc->star = 1;
        part->bound = 0;
        return SWS_CONF_OK;
    }
    n = sws_split_percent(pct);
    if (n <= 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid percent value \"%.*s\"",
                           (int) pct->len, pct->data);
        return SWS_CONF_ERROR;
    }
    sc->sum += (sws_uint_t) n;
    if (sc->sum > 10000) {
        return "percent total is greater than 100%";
    }
    sc->last += (uint32_t) ((uint64_t) n * 0xffffffff / 10000);
    part->bound = sc->last;
    return SWS_CONF_OK;
}

char *
sws_split_clients_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_split_t  *sc;
    const char   *name, *err = NULL;
    char         *rv;

    (void) cmd;
    (void) conf;
    sc = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_split_t));
    if (sc == NULL) {
        return SWS_CONF_ERROR;
    }
    sc->parts = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_split_part_t));
    name = sws_map_var_name(cf, sws_conf_arg(cf, 2));
    if (sc->parts == NULL || name == NULL) {
        return SWS_CONF_ERROR;
    }
    sc->source = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                         SWS_HTTP_ESCAPE_NONE, &err);
    if (sc->source == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return SWS_CONF_ERROR;
    }
    rv = sws_conf_parse_entries(cf, sws_split_entry, sc);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (sc->parts->nelts == 0) {
        return "has no parts";
    }
    return sws_http_variable_add_cached(cf, name, sws_split_variable, sc, 0) == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}
