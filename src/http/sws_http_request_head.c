/*
 * The start of every request, whatever protocol carried its head (HTTP/1
 * lines, HTTP/2 HEADERS, later HTTP/3): the rules of RFC 9110 on a
 * complete head, written once here, and what follows (the phases, the
 * answer to OPTIONS *, or the error). A protocol adds its own rules
 * through r->proto->process_head. The fields the core knows are taken
 * as they arrive, in sws_http_request_head.h.
 */
#include "sws_http_request_head.h"
#include "sws_http_ssl.h"

int
sws_http_request_header_ignored(sws_http_request_t *r, const sws_http_header_t *h, u_char odd)
{
    sws_http_core_srv_conf_t *cscf = sws_http_core_srv(r);

    if (!cscf->ignore_invalid_headers || (odd == 1 && cscf->underscores_in_headers)) {
        return 0;
    }
    sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid header: \"%.*s\", ignored",
                  (int) sws_min(h->name.len, 64), h->name.data);
    return 1;
}

sws_int_t
sws_http_request_header_refused(sws_http_request_t *r, sws_http_header_t *h)
{
    sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent duplicate \"%.*s\" header",
                  (int) h->name.len, h->name.data);
    return SWS_HTTP_BAD_REQUEST;
}

sws_int_t
sws_http_process_request_headers(sws_http_request_t *r)
{
    sws_str_t host, ignored;
    sws_int_t rc;

    /* RFC 9110 7.2: a request names its authority, in Host or (HTTP/2
     * and 3) :authority. HTTP/1.1 needs Host even with an absolute-form
     * target (RFC 9112 3.2); HTTP/1.0 may go without. */
    if (r->h_host == NULL) {
        if (r->http_version >= SWS_HTTP_VERSION_11
            && (r->http_version < SWS_HTTP_VERSION_20 || r->host.len == 0))
        {
            sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent %s request without \"Host\"",
                          r->http_version < SWS_HTTP_VERSION_20 ? "HTTP/1.1" : "a");
            return SWS_HTTP_BAD_REQUEST;
        }
        r->authority = r->host;       /* as sent: $http_host over HTTP/2 and 3 */
    }

    /* The target's authority wins over Host (RFC 9112 3.2.2; RFC 9113
     * 8.3.1, where the protocol has checked that they agree), but a Host
     * with an invalid value is a 400 even then (RFC 9112 3.2). So is one
     * without a name ("", ".", ":80"), as nginx answers: an http(s) target
     * URI always has a host (RFC 9110 4.2.1), and RFC 9112 3.3 lets a
     * server reject the request whose Host leaves it empty. */
    host = r->host.len ? r->host : (r->h_host ? *r->h_host : r->host);
    if (r->h_host && host.data != r->h_host->data
        && (sws_http_validate_host(r, r->h_host, &ignored) != SWS_OK || ignored.len == 0))
    {
        host = *r->h_host;            /* reported below */
    }
    r->host.len = 0;
    if ((host.len || r->h_host)
        && (sws_http_validate_host(r, &host, &r->host) != SWS_OK || r->host.len == 0))
    {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid host \"%.*s\"",
                      (int) sws_min(host.len, 64), host.data);
        return SWS_HTTP_BAD_REQUEST;
    }
    sws_http_find_virtual_server(r, r->session->addr);

    if (r->h_content_length) {
        /* One number. A list, even of the same number ("5, 5"), is refused
         * as nginx refuses it: RFC 9110 8.6 lets a recipient take it as
         * one value or reject it, and a framing two parsers may read
         * differently is how requests are smuggled. */
        r->content_length_n = memchr(r->h_content_length->data, ',', r->h_content_length->len)
                              ? -1
                              : sws_http_parse_content_length(r->h_content_length->data,
                                                              r->h_content_length->len);
        if (r->content_length_n == -1) {
            sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid \"Content-Length\"");
            return SWS_HTTP_BAD_REQUEST;
        }
    }

    rc = r->proto->process_head(r);
    if (rc != SWS_OK) {
        return rc;
    }

    if (r->h_expect) {
        /* RFC 9110 10.1.1: 100-continue is the only expectation there is.
         * It is met when the body is read; an HTTP/1.0 client does not
         * know 100, and without a body there is nothing to wait for.
         * Another expectation is ignored, as nginx ignores it (a server
         * MAY answer it with 417, 10.1.1). */
        r->expect_continue = r->http_version >= SWS_HTTP_VERSION_11
                             && (r->content_length_n > 0 || r->chunked_in)
                             && sws_str_caseeq_cstr(r->h_expect, "100-continue");
    }

    if (r->method == SWS_HTTP_CONNECT) {
        return SWS_HTTP_NOT_ALLOWED;      /* this is not a proxy */
    }
    if (r->asterisk) {
        r->uri = r->raw_path;
        return SWS_DONE;                  /* about the server as a whole */
    }
    return sws_http_set_uri(r, &r->raw_path, r->complex_uri);
}

void
sws_http_start_request(sws_http_request_t *r)
{
    static const sws_str_t allow = sws_string("Allow");
    static const sws_str_t methods = sws_string("GET, HEAD, POST, OPTIONS");
    sws_int_t              rc;

    sws_http_request_count_head(r);
    rc = sws_http_process_request_headers(r);
    if (r->session->plain_on_tls) {
        /* Processed all the same: logged with its line and server. */
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent a plain HTTP request to a TLS port");
        r->keepalive = 0;
        sws_http_finalize(r, rc == SWS_OK || rc == SWS_DONE ? SWS_HTTP_TO_HTTPS : rc);
        return;
    }
    if ((rc == SWS_OK || rc == SWS_DONE) && r->session->ssl) {
        /* The server is known: its client certificate rules apply. */
        sws_int_t  vrc = sws_http_ssl_verify_request(r);

        if (vrc != SWS_OK) {
            sws_http_finalize(r, vrc);
            return;
        }
    }
    if (rc == SWS_OK) {
        sws_http_handler(r);
        return;
    }
    if (rc == SWS_DONE) {
        /* OPTIONS * (RFC 9110 9.3.7) */
        sws_http_header_out_add(r, &allow, &methods);
        rc = sws_http_send_response(r, SWS_HTTP_OK, NULL, NULL);
        sws_http_finalize(r, rc == SWS_ERROR ? SWS_ERROR : SWS_OK);
        return;
    }
    if (rc == SWS_HTTP_NOT_ALLOWED) {
        sws_http_header_out_add(r, &allow, &methods);
    }
    /* A head found wrong: the connection is not trusted with another. */
    r->keepalive = 0;
    sws_http_finalize(r, rc);
}
