/*
 * Whether a host name is one of the names of the request's server, as its
 * server_name directives wrote them: exact, "*.x.com", ".x.com" (x.com
 * too), "mail.*", or a "~" regex. The referer module's "server_names"
 * uses it; the virtual-server choice itself is sws_http_find_server_re()
 * (over the names of every server of an address).
 */
#include "sws_http_core.h"

static int
sws_http_server_name_is(const sws_str_t *name, const sws_str_t *host)
{
    size_t  n = name->len;

    if (n > 2 && name->data[0] == '*' && name->data[1] == '.') {
        /* "*.x.com": a name that ends with ".x.com" */
        return host->len > n - 1
               && memcmp(host->data + host->len - (n - 1), name->data + 1, n - 1) == 0;
    }
    if (n > 1 && name->data[0] == '.') {
        /* ".x.com": as "*.x.com", and "x.com" itself */
        if (host->len == n - 1 && memcmp(host->data, name->data + 1, n - 1) == 0) {
            return 1;
        }
        return host->len > n && memcmp(host->data + host->len - n, name->data, n) == 0;
    }
    if (n > 2 && name->data[n - 1] == '*') {
        /* "mail.*": a name that starts with "mail." */
        return host->len > n - 1 && memcmp(host->data, name->data, n - 1) == 0;
    }
    return host->len == n && memcmp(host->data, name->data, n) == 0;
}

int
sws_http_server_name_match(sws_http_request_t *r, const sws_str_t *host,
    const sws_str_t *subject)
{
    sws_http_core_srv_conf_t  *cscf = sws_http_core_srv(r);
    const sws_str_t           *names = cscf->server_names.elts;
    sws_regex_t              **res;
    sws_uint_t                 i;

    for (i = 0; i < cscf->server_names.nelts; i++) {
        if (names[i].len == 0 || (names[i].len > 1 && names[i].data[0] == '~')) {
            continue;                       /* "" is no name; regexes below */
        }
        if (sws_http_server_name_is(&names[i], host)) {
            return 1;
        }
    }
    if (cscf->server_regexes == NULL || subject == NULL) {
        return 0;
    }
    res = cscf->server_regexes->elts;
    for (i = 0; i < cscf->server_regexes->nelts; i++) {
        if (sws_regex_exec(res[i], subject->data, subject->len, NULL, 0, r->log) > 0) {
            return 1;
        }
    }
    return 0;
}
