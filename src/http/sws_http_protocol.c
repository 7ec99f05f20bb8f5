/*
 * Which protocol a client session speaks. Each protocol registers itself
 * at configuration time (its module's postconfiguration: HTTP/1 in
 * v1/sws_http_v1_module.c, HTTP/2 in v2/sws_http_v2_module.c, HTTP/3 in
 * v3/sws_http_v3_module.c for QUIC listeners, found by a QUIC connection
 * once its handshake is done) with its ALPN id and the listener types
 * it runs on. A session is then given to the protocol the TLS handshake's
 * ALPN chose, or to its listener type's fallback (HTTP/1), which may still
 * hand it on when the client starts with another protocol's preface
 * (HTTP/2's prior knowledge). Nothing here knows a protocol by name.
 */
#include "sws_http_core.h"

static sws_http_core_main_conf_t *
sws_http_protocol_cmcf(sws_http_session_t *s)
{
    return s->cscf->ctx->main_conf[sws_http_core_module.index];
}

sws_int_t
sws_http_protocol_register(sws_conf_t *cf, const sws_http_protocol_t *p)
{
    sws_http_core_main_conf_t  *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    const sws_http_protocol_t **slot, **have;
    sws_uint_t                  i;

    if (cmcf->protocols == NULL) {
        cmcf->protocols = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_http_protocol_t *));
        if (cmcf->protocols == NULL) {
            return SWS_ERROR;
        }
    }
    have = cmcf->protocols->elts;
    for (i = 0; i < cmcf->protocols->nelts; i++) {
        if ((have[i]->listeners & p->listeners)
            && ((p->alpn.len && sws_str_eq(&have[i]->alpn, &p->alpn))
                || (p->fallback && have[i]->fallback)))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "protocol \"%s\" registered over \"%s\"",
                               p->name, have[i]->name);
            return SWS_ERROR;
        }
    }
    slot = sws_array_push(cmcf->protocols);
    if (slot == NULL) {
        return SWS_ERROR;
    }
    *slot = p;
    return SWS_OK;
}

static int
sws_http_protocol_usable(sws_http_session_t *s, const sws_http_protocol_t *p, sws_uint_t listener)
{
    return (p->listeners & listener) && (p->enabled == NULL || p->enabled(s));
}

const sws_http_protocol_t *
sws_http_protocol_find(sws_http_session_t *s, sws_uint_t listener, const sws_str_t *alpn)
{
    sws_http_core_main_conf_t  *cmcf = sws_http_protocol_cmcf(s);
    const sws_http_protocol_t **p;
    sws_uint_t                  i;

    if (cmcf->protocols == NULL) {
        return NULL;
    }
    p = cmcf->protocols->elts;
    for (i = 0; i < cmcf->protocols->nelts; i++) {
        if ((alpn && alpn->len ? sws_str_eq(&p[i]->alpn, alpn) : p[i]->fallback)
            && sws_http_protocol_usable(s, p[i], listener))
        {
            return p[i];
        }
    }
    return NULL;
}

void
sws_http_protocol_start(sws_http_session_t *s, sws_uint_t listener, const sws_str_t *alpn)
{
    sws_http_core_main_conf_t  *cmcf = sws_http_protocol_cmcf(s);
    const sws_http_protocol_t  *p, **all;
    sws_uint_t                  i;

    p = alpn && alpn->len ? sws_http_protocol_find(s, listener, alpn) : NULL;
    if (p == NULL) {
        p = sws_http_protocol_find(s, listener, NULL);
        if (p == NULL) {
            sws_log_error(SWS_LOG_ERR, s->log, 0, "no protocol for this listener");
            sws_http_close_connection(s->connection);
            return;
        }
        /* Without ALPN, a client may still choose a protocol by its
         * preface (not on a TLS port spoken to in clear text). */
        s->prior = NULL;
        all = cmcf->protocols->elts;
        for (i = 0; !s->plain_on_tls && i < cmcf->protocols->nelts; i++) {
            if (all[i]->preface.len && all[i] != p
                && sws_http_protocol_usable(s, all[i], listener))
            {
                s->prior = all[i];
                break;
            }
        }
    }
    p->start(s, NULL, 0);
}

int
sws_http_protocol_alpn_select(sws_http_session_t *s, sws_uint_t listener,
    const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen)
{
    sws_http_core_main_conf_t  *cmcf = sws_http_protocol_cmcf(s);
    const sws_http_protocol_t **p, *best = NULL;
    const unsigned char        *q;
    sws_uint_t                  i;

    if (cmcf->protocols == NULL) {
        return 0;
    }
    /* Our preference (the higher rank), among what the client offers. */
    p = cmcf->protocols->elts;
    for (i = 0; i < cmcf->protocols->nelts; i++) {
        if (p[i]->alpn.len == 0 || (best && best->alpn_rank >= p[i]->alpn_rank)
            || !sws_http_protocol_usable(s, p[i], listener))
        {
            continue;
        }
        for (q = in; q < in + inlen && q + 1 + *q <= in + inlen; q += 1 + *q) {
            if (*q == p[i]->alpn.len && memcmp(q + 1, p[i]->alpn.data, *q) == 0) {
                best = p[i];
                *out = q + 1;
                *outlen = *q;
                break;
            }
        }
    }
    return best != NULL;
}
