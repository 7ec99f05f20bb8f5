/*
 * Conditional requests (RFC 9110 section 13): If-Match, If-Unmodified-Since,
 * If-None-Match and If-Modified-Since, evaluated in the order of 13.2.2 on
 * 200 responses to GET and HEAD. A failed If-Match/If-Unmodified-Since turns
 * the response into a 412 without a body; a matching If-None-Match or an
 * unmodified If-Modified-Since into a 304.
 *
 *   if_modified_since off|exact|before;   (default before: RFC 9110 13.1.3;
 *                                          nginx's default is exact)
 *
 * The check runs first of all, before every header filter
 * (sws_http_send_header calls it), as nginx's not-modified filter, which
 * is at the top of its chain: it decides on the validators the response's
 * producer set, before a module's filter changes them (gzip makes the ETag
 * weak, sub_filter drops it, add_header replaces it), and the filters then
 * see the 304 or the 412 (gzip, sub_filter and gunzip leave it alone,
 * add_header adds only its "always" fields to a 412), as nginx's do. The
 * body filter, after a 412, sends the page instead of the body.
 *
 * A stored response (a cache's) without Last-Modified is judged by its
 * Date instead (RFC 9111 4.3.2).
 */
#include "sws_http_core.h"

#define SWS_HTTP_IMS_OFF     0
#define SWS_HTTP_IMS_EXACT   1
#define SWS_HTTP_IMS_BEFORE  2

typedef struct {
    sws_uint_t  if_modified_since;
} sws_http_not_modified_loc_conf_t;


static void *sws_http_not_modified_create_loc_conf(sws_conf_t *cf);
static char *sws_http_not_modified_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_http_not_modified_init(sws_conf_t *cf);

static const sws_conf_enum_t  sws_http_ims_values[] = {
    { sws_string("off"), SWS_HTTP_IMS_OFF },
    { sws_string("exact"), SWS_HTTP_IMS_EXACT },
    { sws_string("before"), SWS_HTTP_IMS_BEFORE },
    { sws_null_string, 0 }
};

static const sws_command_t  sws_http_not_modified_commands[] = {
    { "if_modified_since",
      SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1,
      sws_conf_set_enum_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_http_not_modified_loc_conf_t, if_modified_since), sws_http_ims_values },
    sws_null_command
};

sws_module_t  sws_http_not_modified_filter_module = {
    SWS_MODULE_ABI,
    .name = "not_modified_filter",
    .commands = sws_http_not_modified_commands,
    .create_loc_conf = sws_http_not_modified_create_loc_conf,
    .merge_loc_conf = sws_http_not_modified_merge_loc_conf,
    .postconfiguration = sws_http_not_modified_init,
};

static sws_http_body_filter_pt    sws_http_next_body_filter;

/* The request context of a 412: its body is dropped. */
static int        sws_http_not_modified_drop;

static sws_str_t  sws_http_not_modified_no_type = { 0, (u_char *) "" };
static sws_str_t  sws_http_not_modified_html = sws_string("text/html");


/*
 * 1 if an entity-tag of the list (one header line) matches etag: by strong
 * comparison (both strong, same opaque-tag) or weak (same opaque-tag).
 * "*" matches any current representation. Malformed members are skipped.
 */
static int
sws_http_etag_list_match(const sws_str_t *list, const sws_str_t *etag, int weak)
{
    u_char       *p, *end, *q;
    int           tag_weak, etag_weak;
    size_t        olen;
    const u_char *opaque;

    etag_weak = etag != NULL && etag->len > 2 && etag->data[0] == 'W' && etag->data[1] == '/';
    if (etag != NULL) {
        opaque = etag->data + (etag_weak ? 2 : 0);
        olen = etag->len - (etag_weak ? 2 : 0);
    } else {
        opaque = NULL;
        olen = 0;
    }

    p = list->data;
    end = p + list->len;

    while (p < end) {
        if (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
            continue;
        }

        if (*p == '*') {
            return 1;
        }

        tag_weak = 0;
        if (end - p > 2 && p[0] == 'W' && p[1] == '/') {
            tag_weak = 1;
            p += 2;
        }

        if (*p != '"') {
            while (p < end && *p != ',') {
                p++;
            }
            continue;
        }

        for (q = p + 1; q < end && *q != '"'; q++) { /* void */ }
        if (q == end) {
            return 0;               /* unterminated */
        }
        q++;                        /* [p, q) is the opaque-tag with its quotes */

        if (opaque != NULL && (size_t) (q - p) == olen && memcmp(p, opaque, olen) == 0
            && (weak || (!tag_weak && !etag_weak)))
        {
            return 1;
        }

        p = q;
        while (p < end && *p != ',') {
            p++;
        }
    }

    return 0;
}


/* Any of the header lines named like h (from h on) matches. */
static int
sws_http_etag_match(const sws_http_header_t *h, const sws_http_header_t *end,
    const sws_str_t *etag, int weak)
{
    const sws_str_t  *name = &h->name;

    for ( ; h < end; h++) {
        if (h->hash != 0 && sws_str_eq(&h->name, name)
            && sws_http_etag_list_match(&h->value, etag, weak))
        {
            return 1;
        }
    }
    return 0;
}


static sws_int_t
sws_http_not_modified(sws_http_request_t *r)
{
    sws_http_set_status(r, SWS_HTTP_NOT_MODIFIED);
    sws_http_set_content_length(r, -1);
    sws_http_set_content_type(r, &sws_http_not_modified_no_type);
    sws_http_allow_ranges(r, 0);
    sws_http_header_out_remove(r, "content-encoding", sizeof("content-encoding") - 1);

    /* ETag, Last-Modified, Cache-Control, Expires, Vary stay (RFC 9110 15.4.5) */
    return SWS_OK;
}


static sws_int_t
sws_http_precondition_failed(sws_http_request_t *r)
{
    sws_buf_t  *page;

    /* the body is the core's page for 412, as nginx's */
    if (sws_http_error_page_make(r, SWS_HTTP_PRECONDITION_FAILED, &page) != SWS_OK) {
        return SWS_ERROR;
    }
    /* an error now: the fields other filters added go (as nginx's) */
    sws_http_clear_response(r);
    sws_http_set_status(r, SWS_HTTP_PRECONDITION_FAILED);
    sws_http_set_content_length(r, page ? page->last - page->pos : 0);
    sws_http_set_content_type(r, page ? &sws_http_not_modified_html
                                      : &sws_http_not_modified_no_type);
    sws_http_set_etag(r, NULL);
    sws_http_set_last_modified(r, -1);
    sws_http_allow_ranges(r, 0);
    sws_http_header_out_remove(r, "content-encoding", sizeof("content-encoding") - 1);

    sws_http_set_ctx(r, &sws_http_not_modified_filter_module,
                     page ? (void *) page : (void *) &sws_http_not_modified_drop);

    return SWS_OK;
}


static int
sws_http_is_name(const sws_http_header_t *h, const char *name, size_t len)
{
    return h->name.len == len && memcmp(h->name.data, name, len) == 0 && h->hash != 0;
}


/* The request's four "if-*" fields, the first line of each (of the
 * dates, the last, and whether there were two), in one pass
 * over its header; 0 when it has none (or is a subrequest: the client's
 * conditions are not its own, an auth service's 200 must not become a 304). */
typedef struct {
    const sws_http_header_t  *im, *inm, *ius, *ims;
    const sws_http_header_t  *end;
    unsigned                  dates;      /* 1: ims twice, 2: ius twice */
} sws_http_conditions_t;

static inline __attribute__((always_inline)) int
sws_http_conditions_find(sws_http_request_t *r, sws_http_conditions_t *c)
{
    sws_uint_t                i, n;
    const sws_array_t        *headers;
    const sws_http_header_t  *h;

    headers = sws_http_headers_in(r);
    h = headers->elts;
    n = headers->nelts;
    c->end = h + n;
    c->im = c->inm = c->ius = c->ims = NULL;
    c->dates = 0;

    for (i = 0; i < n; i++) {
        if (h[i].name.len < 8 || h[i].name.data[0] != 'i' || h[i].name.data[1] != 'f'
            || h[i].name.data[2] != '-')
        {
            continue;
        }

        if (sws_http_is_name(&h[i], "if-match", 8)) {
            c->im = c->im ? c->im : &h[i];
        } else if (sws_http_is_name(&h[i], "if-none-match", 13)) {
            c->inm = c->inm ? c->inm : &h[i];
        } else if (sws_http_is_name(&h[i], "if-modified-since", 17)) {
            c->dates |= c->ims ? 1 : 0;
            c->ims = &h[i];
        } else if (sws_http_is_name(&h[i], "if-unmodified-since", 19)) {
            c->dates |= c->ius ? 2 : 0;
            c->ius = &h[i];
        }
    }

    return (c->im || c->inm || c->ius || c->ims) && sws_http_parent(r) == NULL;
}


/* RFC 9110 13.2.2, steps 1-4, against these validators. (Not inlined:
 * every response passes the check, few have conditions.) */
static __attribute__((noinline)) sws_uint_t
sws_http_conditions_judge(sws_http_request_t *r, const sws_http_conditions_t *c,
    const sws_str_t *etag, time_t lm, const sws_str_t *date)
{
    time_t                             t;
    sws_http_not_modified_loc_conf_t  *lcf;

    if (etag != NULL && etag->len == 0) {
        etag = NULL;
    }

    /* 1. If-Match; 2. If-Unmodified-Since only without If-Match */
    if (c->im != NULL) {
        if (!sws_http_etag_match(c->im, c->end, etag, 0)) {
            return SWS_HTTP_PRECONDITION_FAILED;
        }

    } else if (c->ius != NULL && !(c->dates & 2)) {
        /* an invalid date is ignored, and so are two lines (a list of dates
         * is not a date: RFC 9110 13.1.4; nginx answers 400); without
         * Last-Modified nothing to compare */
        t = sws_parse_http_time(c->ius->value.data, c->ius->value.len);
        if (t != -1 && lm != -1 && lm > t) {
            return SWS_HTTP_PRECONDITION_FAILED;
        }
    }

    /* 3. If-None-Match; 4. If-Modified-Since only without If-None-Match */
    if (c->inm != NULL) {
        if (sws_http_etag_match(c->inm, c->end, etag, 1)) {
            return SWS_HTTP_NOT_MODIFIED;
        }

    } else if (c->ims != NULL && !(c->dates & 1) && (lm != -1 || (date != NULL && date->len))) {
        /* (two lines are a list of dates, which is ignored: RFC 9110
         * 13.1.3; nginx answers 400) */
        lcf = sws_http_loc_conf(r, &sws_http_not_modified_filter_module);
        if (lm == -1) {
            /* a stored response without Last-Modified: its Date (RFC 9111
             * 4.3.2) */
            lm = sws_parse_http_time(date->data, date->len);
        }

        if (lcf->if_modified_since != SWS_HTTP_IMS_OFF) {
            t = sws_parse_http_time(c->ims->value.data, c->ims->value.len);

            if (t != -1 && lm != -1
                && (lm == t
                    || (lcf->if_modified_since == SWS_HTTP_IMS_BEFORE && lm < t
                        && t <= sws_time_sec())))  /* a future date is invalid */
            {
                return SWS_HTTP_NOT_MODIFIED;
            }
        }
    }

    return SWS_HTTP_OK;
}


sws_uint_t
sws_http_preconditions(sws_http_request_t *r, const sws_str_t *etag, time_t last_modified,
    const sws_str_t *date)
{
    sws_http_conditions_t  c;

    if (!(r->etag_conditional | r->date_conditional)
        || !(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))
        || !sws_http_conditions_find(r, &c))
    {
        return SWS_HTTP_OK;
    }
    return sws_http_conditions_judge(r, &c, etag, last_modified, date);
}


sws_int_t
sws_http_not_modified_check(sws_http_request_t *r)
{
    sws_http_conditions_t  c;

    /* (read directly: this runs for every response; the flags say whether
     * the head has any of the four fields at all) */
    if (sws_likely(!(r->etag_conditional | r->date_conditional))
        || r->status != SWS_HTTP_OK
        || !(r->method & (SWS_HTTP_GET | SWS_HTTP_HEAD))
        || !sws_http_conditions_find(r, &c))
    {
        return SWS_OK;
    }

    switch (sws_http_conditions_judge(r, &c, sws_http_etag(r), sws_http_last_modified(r),
                                      sws_http_response_date(r)))
    {
    case SWS_HTTP_NOT_MODIFIED:
        return sws_http_not_modified(r);
    case SWS_HTTP_PRECONDITION_FAILED:
        return sws_http_precondition_failed(r);
    }

    return SWS_OK;
}


/* After a 412: drop the body, pass on only its end. */
static sws_int_t
sws_http_not_modified_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    int           last = 0;
    sws_buf_t    *b;
    sws_pool_t   *pool;
    sws_chain_t  *cl;
    void         *ctx;

    /* only a conditional head can have made a 412 (its context) */
    if (sws_likely(!(r->etag_conditional | r->date_conditional))) {
        return sws_http_next_body_filter(r, in);
    }
    ctx = sws_http_get_ctx(r, &sws_http_not_modified_filter_module);
    if (ctx == NULL) {
        return sws_http_next_body_filter(r, in);
    }

    for (cl = in; cl != NULL; cl = cl->next) {
        b = cl->buf;
        last |= b->last_buf;
        b->pos = b->last;           /* consumed, for producers that reuse buffers */
        b->file_pos = b->file_last;
    }

    if (!last) {
        return SWS_OK;
    }

    pool = sws_http_pool(r);
    /* the page (its buffer is the context), or the end alone */
    b = ctx != &sws_http_not_modified_drop && sws_http_method(r) != SWS_HTTP_HEAD
        ? ctx : sws_calloc_buf(pool);
    cl = sws_alloc_chain_link(pool);
    if (b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    sws_http_set_ctx(r, &sws_http_not_modified_filter_module, &sws_http_not_modified_drop);
    b->last_buf = 1;
    b->last_in_chain = 1;
    cl->buf = b;
    cl->next = NULL;

    return sws_http_next_body_filter(r, cl);
}


static void *
sws_http_not_modified_create_loc_conf(sws_conf_t *cf)
{
    sws_http_not_modified_loc_conf_t  *lcf;

    lcf = sws_palloc(sws_conf_pool(cf), sizeof(sws_http_not_modified_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }
    lcf->if_modified_since = SWS_UNSET_UINT;

    return lcf;
}


static char *
sws_http_not_modified_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_not_modified_loc_conf_t  *prev = parent;
    sws_http_not_modified_loc_conf_t  *conf = child;

    (void) cf;

    sws_conf_merge_uint_value(conf->if_modified_since, prev->if_modified_since,
                              SWS_HTTP_IMS_BEFORE);

    return SWS_CONF_OK;
}


static sws_int_t
sws_http_not_modified_init(sws_conf_t *cf)
{
    (void) cf;

    sws_http_next_body_filter = sws_http_insert_body_filter(sws_http_not_modified_body_filter);

    return SWS_OK;
}
