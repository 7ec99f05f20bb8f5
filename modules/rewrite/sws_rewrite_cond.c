/*
 * The conditions of "if", as nginx writes them:
 *
 *   ($v)                  not empty and not "0"
 *   ($v = TEXT) ($v != TEXT)          TEXT may hold variables
 *   ($v ~ RE) ($v ~* RE) ($v !~ RE) ($v !~* RE)   captures are $1.. after
 *   (-f P) (-d P) (-e P) (-x P), and !-f ... : a file, a directory,
 *                         anything, an executable; P may hold variables
 *
 * The reader splits "($a = "x")" into "($a", "=", "x", ")"; the first
 * argument must start with '(' and the last end with ')'. Evaluation works
 * on any bytes a client sends (a value is rendered into the request's
 * pool, a path with a NUL in it names no file).
 */
#include <sys/stat.h>
#include <unistd.h>
#include "sws_rewrite.h"


static sws_http_format_t *
sws_rewrite_cond_format(sws_conf_t *cf, const sws_str_t *text)
{
    const char         *err = NULL;
    sws_http_format_t  *f;

    f = sws_http_format_compile(sws_conf_pool(cf), text, SWS_HTTP_ESCAPE_NONE, &err);
    if (f == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"if\"", err);
    }
    return f;
}


static char *
sws_rewrite_cond_invalid(sws_conf_t *cf, const sws_str_t *v)
{
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid condition \"%.*s\"", (int) v->len,
                       v->data);
    return SWS_CONF_ERROR;
}


char *
sws_rewrite_cond_parse(sws_conf_t *cf, sws_rewrite_cond_t *c)
{
    sws_uint_t   n = sws_conf_nargs(cf), first = 1, last = n - 1, k, i;
    sws_str_t    w[3], *a, *op;
    const char  *err;
    size_t       len;
    u_char      *p;

    a = sws_conf_arg(cf, 1);
    if (a->len == 0 || a->data[0] != '(') {
        return sws_rewrite_cond_invalid(cf, a);
    }
    a = sws_conf_arg(cf, last);
    if (a->len == 0 || a->data[a->len - 1] != ')') {
        return sws_rewrite_cond_invalid(cf, a);
    }

    /* the words between the parentheses ("(" and ")" may stand alone) */
    k = 0;
    for (i = first; i <= last; i++) {
        sws_str_t  t = *sws_conf_arg(cf, i);

        if (i == first) {
            t.data++;
            t.len--;
        }
        if (i == last) {
            t.len--;
        }
        if (t.len == 0 && (i == first || i == last)) {
            continue;
        }
        if (k == 3) {
            k = 4;
            break;
        }
        w[k++] = t;
    }

    /* the text as written, for rewrite_log */
    len = 0;
    for (i = 1; i < n; i++) {
        len += sws_conf_arg(cf, i)->len + 1;
    }
    p = sws_pnalloc(sws_conf_pool(cf), len);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    c->text.data = p;
    for (i = 1; i < n; i++) {
        if (i > 1) {
            *p++ = ' ';
        }
        p = sws_cpymem(p, sws_conf_arg(cf, i)->data, sws_conf_arg(cf, i)->len);
    }
    c->text.len = (size_t) (p - c->text.data);

    if (k == 0 || k > 3) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid condition \"%.*s\"",
                           (int) c->text.len, c->text.data);
        return SWS_CONF_ERROR;
    }

    if (k == 1) {
        if (w[0].data[0] != '$') {
            return sws_rewrite_cond_invalid(cf, &w[0]);
        }
        c->type = SWS_COND_VALUE;
        c->left = sws_rewrite_cond_format(cf, &w[0]);
        return c->left ? SWS_CONF_OK : SWS_CONF_ERROR;
    }

    if (k == 2) {
        op = &w[0];
        if (op->len == 3 && op->data[0] == '!') {
            c->negate = 1;
            op->data++;
            op->len--;
        }
        if (op->len != 2 || op->data[0] != '-') {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "unexpected \"%.*s\" in condition",
                               (int) w[0].len + c->negate, w[0].data - c->negate);
            return SWS_CONF_ERROR;
        }
        switch (op->data[1]) {
        case 'f': c->type = SWS_COND_FILE; break;
        case 'd': c->type = SWS_COND_DIR; break;
        case 'e': c->type = SWS_COND_EXISTS; break;
        case 'x': c->type = SWS_COND_EXEC; break;
        default:
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid condition \"%.*s\"",
                               (int) w[0].len + c->negate, w[0].data - c->negate);
            return SWS_CONF_ERROR;
        }
        c->left = sws_rewrite_cond_format(cf, &w[1]);
        return c->left ? SWS_CONF_OK : SWS_CONF_ERROR;
    }

    /* $v OP VALUE */
    if (w[0].data[0] != '$') {
        return sws_rewrite_cond_invalid(cf, &w[0]);
    }
    c->left = sws_rewrite_cond_format(cf, &w[0]);
    if (c->left == NULL) {
        return SWS_CONF_ERROR;
    }
    op = &w[1];
    if (sws_str_eq_cstr(op, "=") || sws_str_eq_cstr(op, "!=")) {
        c->type = op->len == 1 ? SWS_COND_EQ : SWS_COND_NE;
        c->right = sws_rewrite_cond_format(cf, &w[2]);
        return c->right ? SWS_CONF_OK : SWS_CONF_ERROR;
    }
    if (sws_str_eq_cstr(op, "~") || sws_str_eq_cstr(op, "~*")
        || sws_str_eq_cstr(op, "!~") || sws_str_eq_cstr(op, "!~*"))
    {
        c->type = SWS_COND_REGEX;
        c->negate = op->data[0] == '!';
        c->re = sws_regex_compile(sws_conf_pool(cf), &w[2],
                                  op->data[op->len - 1] == '*' ? SWS_REGEX_CASELESS : 0,
                                  &err);
        if (c->re == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
        if (sws_http_regex_variables(cf, c->re) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        return SWS_CONF_OK;
    }
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "unexpected \"%.*s\" in condition",
                       (int) op->len, op->data);
    return SWS_CONF_ERROR;
}


static sws_int_t
sws_rewrite_cond_file(const sws_rewrite_cond_t *c, const sws_str_t *path)
{
    struct stat  st;

    if (path->len == 0 || memchr(path->data, '\0', path->len) != NULL) {
        return 0;                             /* names no file */
    }
    if (stat((const char *) path->data, &st) != 0) {
        return 0;
    }
    switch (c->type) {
    case SWS_COND_FILE:
        return S_ISREG(st.st_mode);
    case SWS_COND_DIR:
        return S_ISDIR(st.st_mode);
    case SWS_COND_EXEC:
        return access((const char *) path->data, X_OK) == 0 && !S_ISDIR(st.st_mode);
    default:
        return 1;
    }
}


sws_int_t
sws_rewrite_cond_eval(sws_http_request_t *r, const sws_rewrite_cond_t *c)
{
    sws_str_t   left, right;
    sws_int_t   rc, res;

    if (sws_rewrite_render(r, c->left, &left) != SWS_OK) {
        return SWS_ERROR;
    }

    switch (c->type) {
    case SWS_COND_VALUE:
        return left.len != 0 && !(left.len == 1 && left.data[0] == '0');

    case SWS_COND_EQ:
    case SWS_COND_NE:
        if (sws_rewrite_render(r, c->right, &right) != SWS_OK) {
            return SWS_ERROR;
        }
        res = left.len == right.len && memcmp(left.data, right.data, left.len) == 0;
        return c->type == SWS_COND_EQ ? res : !res;

    case SWS_COND_REGEX:
        /* left lives in the request's pool: the captures point into it */
        rc = sws_http_regex_exec(r, c->re, &left);
        if (rc == SWS_ERROR) {
            return SWS_ERROR;
        }
        res = rc != SWS_DECLINED;
        return c->negate ? !res : res;

    default:
        res = sws_rewrite_cond_file(c, &left);
        return c->negate ? !res : res;
    }
}
