/*
 * hello: an example third-party ScalWS module.
 *
 *     location / {
 *         hello_header X-Hello "world";
 *         hello_header X-Served-By scalws;
 *     }
 *
 * adds those headers to every response of the location. A location without
 * hello_header inherits the list of the enclosing level, if any.
 *
 * It shows the whole life of a module, through the SDK headers only:
 *   - a directive with its own setter (hello_header),
 *   - a per-location configuration, created and merged,
 *   - a header filter, inserted at postconfiguration time.
 *
 * Build it against the installed SDK (see Makefile), or in the tree with
 * ./configure --add-module=contrib/hello-module (see config).
 */
#include <scalws/scalws.h>

typedef struct {
    sws_array_t  *headers;      /* of sws_http_header_t; NULL: not set here */
} hello_loc_conf_t;

static char *hello_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *hello_create_loc_conf(sws_conf_t *cf);
static char *hello_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t hello_init(sws_conf_t *cf);
static sws_int_t hello_header_filter(sws_http_request_t *r);

static const sws_command_t hello_commands[] = {
    { "hello_header", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE2, hello_header,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

/* The one symbol the server looks for. */
SWS_EXPORT sws_module_t sws_module = {
    .abi_major = SWS_ABI_MAJOR,
    .abi_minor = SWS_ABI_MINOR,
    .name = "hello",
    .commands = hello_commands,
    .create_loc_conf = hello_create_loc_conf,
    .merge_loc_conf = hello_merge_loc_conf,
    .postconfiguration = hello_init,
};

/* The next filter in the chain: ours runs, then calls it. */
static sws_http_header_filter_pt hello_next_header_filter;


/* hello_header NAME VALUE; */
static char *
hello_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    hello_loc_conf_t   *hlcf = conf;
    sws_http_header_t  *h;
    sws_str_t          *name, *value;
    size_t              i;

    (void) cmd;

    name = sws_conf_arg(cf, 1);
    value = sws_conf_arg(cf, 2);

    if (name->len == 0) {
        return "has an empty header name";
    }
    for (i = 0; i < name->len; i++) {
        if (name->data[i] <= ' ' || name->data[i] == ':' || name->data[i] >= 0x7f) {
            return "has an invalid header name";
        }
    }

    if (hlcf->headers == NULL) {
        hlcf->headers = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_http_header_t));
        if (hlcf->headers == NULL) {
            return SWS_CONF_ERROR;
        }
    }

    h = sws_array_push(hlcf->headers);
    if (h == NULL) {
        return SWS_CONF_ERROR;
    }

    /* The arguments may not outlive the parsing: keep copies in the
     * configuration's pool, which lives as long as every request using it. */
    h->name.len = name->len;
    h->name.data = sws_pstrdup(sws_conf_pool(cf), name);
    h->value.len = value->len;
    h->value.data = sws_pstrdup(sws_conf_pool(cf), value);
    h->hash = sws_hash_key_lc(name->data, name->len);

    if (h->name.data == NULL || h->value.data == NULL) {
        return SWS_CONF_ERROR;
    }

    return SWS_CONF_OK;
}


static void *
hello_create_loc_conf(sws_conf_t *cf)
{
    /* Zeroed: headers == NULL means "not set at this level". */
    return sws_pcalloc(sws_conf_pool(cf), sizeof(hello_loc_conf_t));
}


static char *
hello_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    hello_loc_conf_t  *prev = parent;
    hello_loc_conf_t  *conf = child;

    (void) cf;
    sws_conf_merge_ptr_value(conf->headers, prev->headers, NULL);

    return SWS_CONF_OK;
}


static sws_int_t
hello_init(sws_conf_t *cf)
{
    (void) cf;
    hello_next_header_filter = sws_http_insert_header_filter(hello_header_filter);

    return SWS_OK;
}


static sws_int_t
hello_header_filter(sws_http_request_t *r)
{
    hello_loc_conf_t         *hlcf;
    const sws_http_header_t  *h;
    sws_uint_t                i;

    hlcf = sws_http_loc_conf(r, &sws_module);

    if (hlcf != NULL && hlcf->headers != NULL) {
        h = hlcf->headers->elts;
        for (i = 0; i < hlcf->headers->nelts; i++) {
            if (sws_http_header_out_add(r, &h[i].name, &h[i].value) == NULL) {
                return SWS_ERROR;
            }
        }
    }

    return hello_next_header_filter(r);
}
