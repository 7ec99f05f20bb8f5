/* limit_rate pacing (sws_http_limit_rate.c), for the protocols' writers. */
#ifndef SWS_HTTP_LIMIT_RATE_H
#define SWS_HTTP_LIMIT_RATE_H

#include "sws_http_core.h"

/* How many bytes of r's response may go now, sent (head included) having
 * gone: -1 no limit; 0 none, *delay ms until some may; else that many. */
off_t sws_http_limit_rate_allow(sws_http_request_t *r, off_t sent, sws_msec_t *delay);
/* The setter of limit_rate and limit_rate_after (sws_http_format_t * at
 * cmd->offset of the location conf). */
/* set $limit_rate TEXT: the rate from now on (as nginx: an invalid size
 * is logged and changes nothing). */
void sws_http_limit_rate_set_text(sws_http_request_t *r, const sws_str_t *text);
char *sws_http_limit_rate_set_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#endif
