/*
 * The end of a request, whatever the protocol. A request has two sides
 * that end apart:
 *
 *   the server's: sws_http_finalize (a handler, the phases, the upstream
 *     framework say the response is produced, or failed); r->done;
 *   the client's: the protocol says, with sws_http_request_ended, that the
 *     response reached the client whole, or will never (cut, reset, the
 *     client gone); r->client_ended.
 *
 * The core owns what happens then: the status of a request the client
 * left (499, or the protocol's 400 for a head it broke off), the log (once,
 * when the client's side ends) and the release (once both sides ended:
 * r->proto->release lets the protocol reuse or free what it carried the
 * request in). A request marked r->background (a cache update the client
 * does not wait for) outlives its client's side: logged then, released at
 * its finalisation; one that waits for background subrequests (mirrors,
 * r->subreq_wait), at the end of the last of them. The protocol's
 * operations only move bytes: finish sends the rest of the response and
 * ends it, or cuts it.
 */
#include "sws_http_core.h"

void
sws_http_finalize(sws_http_request_t *r, sws_int_t rc)
{
    if (rc == SWS_DONE || r->done) {
        return;
    }
    if (sws_unlikely(r->output_subreqs) && sws_http_subrequest_output_hold(r, rc)) {
        return;
    }
    if (r->client_ended) {
        /* The client's side ended before (a background request): nothing
         * more goes to it. */
        r->done = 1;
        if (!sws_http_subrequest_waits(r)) {
            r->proto->release(r);
        }
        return;
    }

    if (rc == SWS_ERROR || rc == SWS_HTTP_CLOSE || rc == SWS_HTTP_CLIENT_CLOSED_REQUEST) {
        if (rc == SWS_HTTP_CLOSE || rc == SWS_HTTP_CLIENT_CLOSED_REQUEST) {
            r->status = (sws_uint_t) rc;
        } else if (r->status == 0) {
            r->status = SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        r->keepalive = 0;
        r->done = 1;
        r->proto->finish(r, SWS_ERROR);
        return;
    }

    if (rc >= 100) {
        if (r->header_sent) {
            /* Too late for an error page: cut the response. */
            r->keepalive = 0;
            r->done = 1;
            r->proto->finish(r, SWS_ERROR);
            return;
        }
        rc = sws_http_special_response(r, (sws_uint_t) rc);
        if (rc == SWS_DONE) {
            return;     /* an error_page redirect took over */
        }
        if (rc == SWS_ERROR) {
            r->done = 1;
            r->proto->finish(r, SWS_ERROR);
            return;
        }
    } else if (!r->header_sent) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "a handler finished without a response");
        rc = sws_http_special_response(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        if (rc == SWS_ERROR || rc == SWS_DONE) {
            if (rc == SWS_ERROR) {
                r->done = 1;
                r->proto->finish(r, SWS_ERROR);
            }
            return;
        }
    }

    r->done = 1;
    r->proto->finish(r, SWS_OK);
}

/* The rest of sws_http_request_ended (sws_http_core.h): a response that
 * did not reach the client whole, or a background request. */
sws_int_t
sws_http_request_ended_other(sws_http_request_t *r, sws_int_t rc)
{
    if (rc != SWS_OK) {
        r->cut = 1;
        if (!r->done) {
            if (rc >= 100 && !r->stat_writing) {
                r->status = (sws_uint_t) rc;   /* left while sending its head */
            } else if (r->stat_writing && !r->header_sent) {
                /* Left while its response was being produced (nginx: 499). */
                r->status = SWS_HTTP_CLIENT_CLOSED_REQUEST;
            }
        }
    }
    r->client_ended = 1;
    /* A head never completed, broken off without a word: not a request. */
    if (r->stat_writing || r->status) {
        sws_http_log_request(r);
    }
    if (r->background && !r->done) {
        return SWS_AGAIN;          /* sws_http_finalize releases it */
    }
    if (sws_http_subrequest_waits(r)) {
        return SWS_AGAIN;          /* the last mirror to end releases it */
    }
    r->done = 1;
    r->proto->release(r);
    return SWS_OK;
}
