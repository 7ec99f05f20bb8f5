/*
 * Regex matches of a request: the captures of its last successful match
 * are $1..$9 and the named groups' variables, for rewrite replacements,
 * proxy_pass, alias, try_files, fastcgi_split_path_info ...
 */
#include <string.h>

#include "sws_http_core.h"
#include "sws_http_variables.h"


sws_int_t
sws_http_regex_exec(sws_http_request_t *r, const sws_regex_t *re, const sws_str_t *s)
{
    sws_int_t   rc;
    sws_uint_t  pairs = sws_regex_captures(re) + 1;
    size_t     *ov;

    if (r->captures_size < pairs) {
        ov = sws_palloc(r->pool, 2 * pairs * sizeof(size_t));
        if (ov == NULL) {
            return SWS_ERROR;
        }
    } else {
        ov = r->captures;
    }

    rc = sws_regex_exec(re, s->data, s->len, ov, pairs, r->log);
    if (rc <= 0) {
        return rc;         /* no match (or an error): the captures stay */
    }

    if (ov != r->captures) {
        r->captures = ov;
        r->captures_size = pairs;
    }
    r->captures_re = re;
    r->captures_data = s->data;
    r->ncaptures = pairs;
    return rc;
}


void
sws_http_regex_capture(sws_http_request_t *r, sws_uint_t n, sws_str_t *value)
{
    value->len = 0;
    value->data = NULL;
    if (n >= r->ncaptures || r->captures[2 * n] == SWS_REGEX_UNSET) {
        return;
    }
    value->data = (u_char *) r->captures_data + r->captures[2 * n];
    value->len = r->captures[2 * n + 1] - r->captures[2 * n];
}


/* $NAME of a named group: its number in the regex that matched last (the
 * same name may be a different group, or absent, in another regex). */
static void
sws_http_regex_named_var(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_str_t  *name = data;
    sws_str_t         n;
    sws_uint_t        i, group;

    value->len = 0;
    value->data = NULL;
    if (r->captures_re == NULL) {
        return;
    }
    for (i = 0; (group = sws_regex_name(r->captures_re, i, &n)) != 0; i++) {
        if (n.len == name->len && memcmp(n.data, name->data, n.len) == 0) {
            sws_http_regex_capture(r, group, value);
            return;
        }
    }
}


sws_int_t
sws_http_regex_variables(sws_conf_t *cf, const sws_regex_t *re)
{
    char        *cname;
    sws_str_t    n, *name;
    sws_uint_t   i;
    sws_pool_t  *pool = sws_conf_pool(cf);

    for (i = 0; sws_regex_name(re, i, &n) != 0; i++) {
        name = sws_palloc(pool, sizeof(sws_str_t) + n.len + 1);
        if (name == NULL) {
            return SWS_ERROR;
        }
        cname = (char *) (name + 1);
        memcpy(cname, n.data, n.len);
        cname[n.len] = '\0';
        name->data = (u_char *) cname;
        name->len = n.len;
        if (sws_http_variable_add(cf, cname, sws_http_regex_named_var, name) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}
