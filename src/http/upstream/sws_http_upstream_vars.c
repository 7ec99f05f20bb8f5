/*
 * The $upstream_* variables (access log): one value per attempt, joined
 * with ", " as nginx does ("10.0.0.1:80, 10.0.0.2:80"), and the headers of
 * the last response as received, for $upstream_http_NAME (kept only when a
 * format of the configuration uses one). A file of its own so that the
 * variables do not pull the whole framework in.
 */
#include "sws_http_upstream.h"

static u_char *
sws_ups_var_ms(u_char *p, sws_msec_t ms)
{
    if (ms < 0) {
        *p++ = '-';
        return p;
    }
    p = sws_sprint_uint(p, (uint64_t) ms / 1000);
    *p++ = '.';
    *p++ = (u_char) ('0' + ms % 1000 / 100);
    *p++ = (u_char) ('0' + ms % 100 / 10);
    *p++ = (u_char) ('0' + ms % 10);
    return p;
}

void
sws_http_upstream_variable(sws_http_request_t *r, sws_uint_t which, sws_str_t *v)
{
    sws_http_upstream_t         *u = r->upstream;
    sws_http_upstream_attempt_t *a;
    sws_uint_t                   i;
    size_t                       len = 0;
    u_char                      *p;

    v->len = 0;
    v->data = NULL;
    if (u == NULL || u->nattempts == 0) {
        return;
    }
    for (i = 0; i < u->nattempts; i++) {
        len += (which == SWS_UPS_VAR_ADDR ? u->attempts[i].addr->len : 24) + 2;
    }
    p = sws_pnalloc(r->pool, len);
    if (p == NULL) {
        return;
    }
    v->data = p;
    for (i = 0; i < u->nattempts; i++) {
        a = &u->attempts[i];
        if (i) {
            *p++ = ',';
            *p++ = ' ';
        }
        switch (which) {
        case SWS_UPS_VAR_ADDR:
            p = sws_cpymem(p, a->addr->data, a->addr->len);
            break;
        case SWS_UPS_VAR_STATUS:
            if (a->status) {
                p = sws_sprint_uint(p, a->status);
            } else {
                *p++ = '-';
            }
            break;
        case SWS_UPS_VAR_RESPONSE_TIME:
            p = sws_ups_var_ms(p, a->response_ms >= 0 ? a->response_ms
                                  : sws_current_msec() - u->attempt_msec);
            break;
        case SWS_UPS_VAR_CONNECT_TIME:
            p = sws_ups_var_ms(p, a->connect_ms);
            break;
        case SWS_UPS_VAR_HEADER_TIME:
            p = sws_ups_var_ms(p, a->header_ms);
            break;
        case SWS_UPS_VAR_RESPONSE_LENGTH:
            p = sws_sprint_uint(p, (uint64_t) a->body);
            break;
        case SWS_UPS_VAR_BYTES_SENT:
            p = sws_sprint_uint(p, (uint64_t) a->sent);
            break;
        default:
            p = sws_sprint_uint(p, (uint64_t) a->received);
        }
    }
    v->len = (size_t) (p - v->data);
}

/* ---- the received headers ---- */

/* The configuration being read: its formats mark what they need. */
static sws_http_upstream_main_conf_t *sws_ups_configuring;

void
sws_ups_set_configuring(sws_http_upstream_main_conf_t *umcf)
{
    sws_ups_configuring = umcf;
}

sws_http_upstream_main_conf_t *
sws_ups_configuring_main(void)
{
    return sws_ups_configuring;
}

void
sws_ups_headers_wanted(void)
{
    if (sws_ups_configuring) {
        sws_ups_configuring->keep_headers = 1;
    }
}

sws_int_t
sws_ups_header_record(sws_http_upstream_t *u, const sws_str_t *name, const sws_str_t *value,
    int copy)
{
    sws_http_header_t *h;
    u_char            *p;

    if (u->headers_in == NULL) {
        u->headers_in = sws_array_create(u->r->pool, 16, sizeof(sws_http_header_t));
        if (u->headers_in == NULL) {
            return SWS_ERROR;
        }
    }
    h = sws_array_push(u->headers_in);
    if (h == NULL) {
        return SWS_ERROR;
    }
    h->hash = 1;                       /* live (0 would mean deleted) */
    h->name = *name;
    h->value = *value;
    if (copy) {
        p = sws_pnalloc(u->r->pool, name->len + value->len + 1);
        if (p == NULL) {
            return SWS_ERROR;
        }
        h->name.data = p;
        p = sws_cpymem(p, name->data, name->len);
        h->value.data = p;
        if (value->len) {
            memcpy(p, value->data, value->len);
        }
    }
    return SWS_OK;
}

sws_int_t
sws_http_upstream_header_received(sws_http_upstream_t *u, const sws_str_t *name,
    const sws_str_t *value)
{
    if (!u->keep_headers) {
        return SWS_OK;
    }
    u->noted = 1;
    return sws_ups_header_record(u, name, value, 1);
}

const sws_array_t *
sws_http_upstream_headers_in(sws_http_request_t *r)
{
    sws_http_upstream_t *u = r->upstream;

    return u ? u->headers_in : NULL;
}
