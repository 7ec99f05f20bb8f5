/*
 * proxy_cookie_domain and proxy_cookie_path: the domain= and path=
 * attributes of the server's Set-Cookie rewritten, as nginx does.
 *
 *   proxy_cookie_domain off | DOMAIN REPLACEMENT;   repeatable
 *   proxy_cookie_path   off | PATH REPLACEMENT;
 *
 * DOMAIN matches the attribute's value without case (a leading "." is not
 * part of it); PATH matches its start. "~REGEX" (or "~*" without case) is
 * matched instead, its captures usable in REPLACEMENT, which may hold
 * variables. The first rule that matches applies.
 */
#include "sws_proxy.h"

/* A rule matching value: SWS_OK with *out, SWS_DECLINED, or SWS_ERROR. */
static sws_int_t
sws_proxy_cookie_rule(sws_http_request_t *r, const sws_proxy_cookie_rule_t *rule,
    const sws_str_t *value, int prefix, sws_str_t *out)
{
    size_t     tail = 0;
    sws_int_t  rc;
    u_char    *p;

    if (rule->re) {
        rc = sws_http_regex_exec(r, rule->re, value);
        if (rc == SWS_DECLINED || rc == SWS_ERROR) {
            return rc;                         /* else the groups matched */
        }
    } else if (prefix) {
        if (value->len < rule->match.len
            || memcmp(value->data, rule->match.data, rule->match.len) != 0)
        {
            return SWS_DECLINED;
        }
        tail = value->len - rule->match.len;       /* the rest of the path stays */
    } else if (value->len != rule->match.len
               || sws_strncasecmp(value->data, rule->match.data, value->len) != 0)
    {
        return SWS_DECLINED;
    }
    if (sws_http_format_string(rule->replacement, r, sws_http_pool(r), tail + 1, NULL, 0, out)
        != SWS_OK)
    {
        return SWS_ERROR;
    }
    p = out->data + out->len;
    if (tail) {
        p = sws_cpymem(p, value->data + value->len - tail, tail);
    }
    out->len = (size_t) (p - out->data);
    return SWS_OK;
}

/* The attribute value [*vs, *ve) of one attribute named name, or none. */
static int
sws_proxy_cookie_attr(const u_char *p, const u_char *last, const char *name, size_t nlen,
    const u_char **vs, const u_char **ve)
{
    const u_char  *s, *e;

    for ( ;; ) {
        p = memchr(p, ';', (size_t) (last - p));
        if (p == NULL) {
            return 0;
        }
        for (s = p + 1; s < last && (*s == ' ' || *s == '\t'); s++) { }
        for (e = s; e < last && *e != ';'; e++) { }
        if ((size_t) (e - s) > nlen && s[nlen] == '='
            && sws_strncasecmp((u_char *) s, (u_char *) name, nlen) == 0)
        {
            *vs = s + nlen + 1;
            while (e > *vs && (e[-1] == ' ' || e[-1] == '\t')) {
                e--;
            }
            *ve = e;
            return 1;
        }
        p = e;
    }
}

/* Rewrite the attribute name of value with the first matching rule. */
static sws_int_t
sws_proxy_cookie_rewrite(sws_http_request_t *r, sws_array_t *rules, const char *name,
    int prefix, sws_str_t *value)
{
    const sws_proxy_cookie_rule_t  *rule;
    const u_char                   *vs, *ve;
    sws_str_t                       attr, to;
    sws_uint_t                      i;
    sws_int_t                       rc;
    int                             dot;
    size_t                          len;
    u_char                         *p;

    if (rules == NULL || rules->nelts == 0
        || !sws_proxy_cookie_attr(value->data, value->data + value->len, name, strlen(name),
                                  &vs, &ve))
    {
        return SWS_OK;
    }
    dot = !prefix && vs < ve && *vs == '.';          /* ".example.com" */
    attr.data = (u_char *) vs + dot;
    attr.len = (size_t) (ve - vs) - dot;
    rule = rules->elts;
    for (i = 0; i < rules->nelts; i++) {
        rc = sws_proxy_cookie_rule(r, &rule[i], &attr, prefix, &to);
        if (rc == SWS_DECLINED) {
            continue;
        }
        if (rc != SWS_OK) {
            return SWS_ERROR;
        }
        len = value->len - attr.len + to.len;
        p = sws_pnalloc(sws_http_pool(r), len);
        if (p == NULL) {
            return SWS_ERROR;
        }
        memcpy(p, value->data, (size_t) (attr.data - value->data));
        memcpy(p + (attr.data - value->data), to.data, to.len);
        memcpy(p + (attr.data - value->data) + to.len, attr.data + attr.len,
               (size_t) (value->data + value->len - (attr.data + attr.len)));
        value->data = p;
        value->len = len;
        return SWS_OK;
    }
    return SWS_OK;
}

sws_int_t
sws_proxy_rewrite_cookie(sws_http_request_t *r, sws_proxy_loc_conf_t *plcf, sws_str_t *value)
{
    if (sws_proxy_cookie_rewrite(r, plcf->cookie_domains, "domain", 0, value) != SWS_OK
        || sws_proxy_cookie_rewrite(r, plcf->cookie_paths, "path", 1, value) != SWS_OK)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* proxy_cookie_domain / proxy_cookie_path off | MATCH REPLACEMENT
 * (cmd->offset: where the list is in the loc conf) */
char *
sws_proxy_cookie(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_array_t              **rules = (sws_array_t **) ((u_char *) conf + cmd->offset);
    sws_proxy_cookie_rule_t   *rule;
    sws_str_t                 *a1 = sws_conf_arg(cf, 1), pat;
    const char                *err = NULL;
    int                        caseless;

    if (*rules == NULL) {
        *rules = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_proxy_cookie_rule_t));
        if (*rules == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    if (sws_conf_nargs(cf) == 2) {
        if (!sws_str_eq_cstr(a1, "off")) {
            return "takes \"off\" or a match and a replacement";
        }
        if ((*rules)->nelts) {
            return "\"off\" cannot be combined with other rules";
        }
        return SWS_CONF_OK;                            /* an empty list: off */
    }
    rule = sws_array_push(*rules);
    if (rule == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(rule, sizeof(*rule));
    if (a1->len > 1 && a1->data[0] == '~') {
        caseless = a1->len > 2 && a1->data[1] == '*';
        pat.data = a1->data + 1 + caseless;
        pat.len = a1->len - 1 - caseless;
        /* a domain is matched without case, as nginx */
        if (cmd->offset == offsetof(sws_proxy_loc_conf_t, cookie_domains)) {
            caseless = 1;
        }
        rule->re = sws_regex_compile(sws_conf_pool(cf), &pat,
                                     caseless ? SWS_REGEX_CASELESS : 0, &err);
        if (rule->re == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
    } else {
        rule->match = *a1;
        if (cmd->offset == offsetof(sws_proxy_loc_conf_t, cookie_domains)
            && rule->match.len && rule->match.data[0] == '.')
        {
            rule->match.data++;                        /* ".example.com" */
            rule->match.len--;
        }
    }
    rule->replacement = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 2),
                                                SWS_HTTP_ESCAPE_NONE, &err);
    if (rule->replacement == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err ? err : "invalid replacement");
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
