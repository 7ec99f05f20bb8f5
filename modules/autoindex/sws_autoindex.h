/*
 * The autoindex module: directory listings (sws_autoindex_module.c reads
 * the directory, sws_autoindex_format.c writes HTML, JSON or XML).
 */
#ifndef SWS_AUTOINDEX_H
#define SWS_AUTOINDEX_H

#include <scalws/scalws.h>

#define SWS_AUTOINDEX_HTML  0
#define SWS_AUTOINDEX_JSON  1
#define SWS_AUTOINDEX_XML   2
#define SWS_AUTOINDEX_JSONP 3   /* json in callback(...), as nginx's */

typedef struct {
    sws_int_t   enable;
    sws_uint_t  format;          /* SWS_AUTOINDEX_* */
    sws_int_t   exact_size;
    sws_int_t   localtime;
} sws_autoindex_loc_conf_t;

typedef struct {
    sws_str_t   name;
    off_t       size;
    time_t      mtime;
    unsigned    dir:1;
    unsigned    file:1;          /* a regular file (JSON: "file", else "other") */
} sws_autoindex_entry_t;

/* A growing output buffer in the request's pool. */
typedef struct {
    sws_pool_t *pool;
    u_char     *start, *pos, *end;
} sws_autoindex_out_t;

u_char   *sws_autoindex_reserve(sws_autoindex_out_t *o, size_t n);

/* Write the listing of uri (the request's, decoded) into o: SWS_OK or SWS_ERROR. */
sws_int_t sws_autoindex_html(sws_autoindex_out_t *o, const sws_str_t *uri,
    const sws_autoindex_entry_t *e, sws_uint_t n, const sws_autoindex_loc_conf_t *conf);
/* jsonp: callback NULL for plain json. */
sws_int_t sws_autoindex_json(sws_autoindex_out_t *o, const sws_str_t *callback,
    const sws_autoindex_entry_t *e, sws_uint_t n);
sws_int_t sws_autoindex_xml(sws_autoindex_out_t *o, const sws_autoindex_entry_t *e,
    sws_uint_t n);

#endif
