/* limit_rate pacing (sws_http_limit_rate.c), for the protocols' writers. */
#ifndef SWS_HTTP_LIMIT_RATE_H
#define SWS_HTTP_LIMIT_RATE_H

#include "sws_http_core.h"

off_t sws_http_limit_rate_pace(sws_http_request_t *r, off_t sent, sws_msec_t *delay);

/* How many bytes of r's response may go now, sent (head included) having
 * gone: -1 no limit; 0 none, *delay ms until some may; else that many.
 * Where no limit_rate is configured (no directive, no map of $limit_rate)
 * and nothing set one for r, that is known without a call. */
static inline off_t
sws_http_limit_rate_allow(sws_http_request_t *r, off_t sent, sws_msec_t *delay)
{
    if (r->limit_rate_set ? r->limit_rate == 0
        : sws_http_core_loc(r)->limit_rate == NULL
          && (r->main_conf == NULL || sws_http_core_main(r)->limit_rate_map == NULL))
    {
        *delay = 0;
        return -1;
    }
    return sws_http_limit_rate_pace(r, sent, delay);
}
/* The setter of limit_rate and limit_rate_after (sws_http_format_t * at
 * cmd->offset of the location conf). */
/* set $limit_rate TEXT: the rate from now on (as nginx: an invalid size
 * is logged and changes nothing). */
void sws_http_limit_rate_set_text(sws_http_request_t *r, const sws_str_t *text);
char *sws_http_limit_rate_set_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#endif
