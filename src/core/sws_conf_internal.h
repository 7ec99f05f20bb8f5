/* The configuration parser's state (sws_conf_t) and the directive dispatcher. */
#ifndef SWS_CONF_INTERNAL_H
#define SWS_CONF_INTERNAL_H

#include <scalws/scalws.h>
#include "sws_conf_tree.h"

/* The configuration contexts of the http levels: one conf pointer per
 * module (indexed by module->index) at each level. */
typedef struct {
    void  **main_conf;
    void  **srv_conf;
    void  **loc_conf;
} sws_http_conf_ctx_t;

struct sws_conf_s {
    sws_conf_node_t  *node;       /* the directive being handled */
    sws_cycle_t      *cycle;
    sws_pool_t       *pool;       /* the cycle's pool */
    sws_pool_t       *temp_pool;  /* freed after configuration */
    sws_log_t        *log;
    /* For SWS_MAIN_CONF/SWS_EVENT_CONF: unused (main confs are in the
     * cycle). For http contexts: the sws_http_conf_ctx_t of this level. */
    void             *ctx;
    uint32_t          cmd_type;   /* the context being parsed: SWS_*_CONF */
    void             *handler_data;
};

/* Dispatch every directive of block (children of a node) in the current
 * context of cf: find the command among the cycle's modules, check its
 * context, argument count and block-ness, locate its conf and call its
 * setter. Errors are logged with file and line; returns SWS_OK/SWS_ERROR. */
sws_int_t sws_conf_dispatch(sws_conf_t *cf, sws_array_t *block);

/* For block directives (events, http, server, location): dispatch the
 * current node's children with a new ctx and context type, then restore cf.
 * Returns SWS_CONF_OK or SWS_CONF_ERROR. */
char *sws_conf_parse_block(sws_conf_t *cf, void *ctx, uint32_t cmd_type);

#endif
