/*
 * Where request bodies go when they do not fit in memory: the
 * "http_body_file" module's per-location configuration.
 */
#ifndef SWS_HTTP_BODY_FILE_H
#define SWS_HTTP_BODY_FILE_H

#include "sws_http_temp_file.h"

#define SWS_HTTP_BODY_FILE_OFF    0
#define SWS_HTTP_BODY_FILE_ON     1       /* always a file, kept after the request */
#define SWS_HTTP_BODY_FILE_CLEAN  2       /* always a file, removed after the request */

typedef struct {
    sws_http_temp_path_t  *temp_path;     /* client_body_temp_path */
    sws_uint_t             in_file_only;  /* client_body_in_file_only */
    sws_int_t              single_buffer; /* client_body_in_single_buffer */
} sws_http_body_file_conf_t;

extern sws_module_t sws_http_body_file_module;

#define sws_http_body_file_conf(r) \
    ((sws_http_body_file_conf_t *) (r)->loc_conf[sws_http_body_file_module.index])

#endif
