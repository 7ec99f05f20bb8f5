/*
 * Buffering on, every buffer full and waiting for a slow client: instead of
 * pausing the server (which keeps its connection, and the server's worker,
 * busy for as long as the client takes), the rest of the body is read into
 * one more buffer, decoded there, appended to a temporary file
 * (temp_path, removed from the directory at once: only the descriptor
 * knows it) and passed on as file buffers, which the writer sends with
 * sendfile() (or pread) after the memory buffers before them. The server's
 * connection is then done as fast as it sends, as with nginx.
 *
 * max_temp_file_size bounds the file: beyond it, reading goes back to the
 * memory buffers and pauses when they are full, as without a file. A file
 * that cannot be made (a full disk, a directory that cannot be written) is
 * logged and the response goes on in memory; a write that fails after the
 * first one cuts the response (logged, the client's connection closed).
 */
#include "sws_http_upstream.h"

int
sws_ups_spill_possible(sws_http_upstream_t *u)
{
    return u->buffering && !u->spill_done && u->conf->max_temp_file_size > 0
           && !u->r->header_only;
}

sws_int_t
sws_ups_spill_begin(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;
    size_t              size = u->conf->temp_file_write_size;

    if (!sws_ups_spill_possible(u)) {
        return SWS_DECLINED;
    }
    if (u->tf == NULL) {
        u->tf = sws_http_temp_file_open(r->pool, r->log, u->conf->temp_path,
                                        SWS_HTTP_TEMP_UNLINK);
        if (u->tf == NULL) {
            sws_log_error(SWS_LOG_ERR, r->log, 0, "the response of upstream %.*s stays in "
                          "memory: no temporary file in \"%s\"", (int) u->peer->name.len,
                          u->peer->name.data, (char *) u->conf->temp_path->name.data);
            u->spill_done = 1;
            return SWS_DECLINED;
        }
        sws_log_debug(r->log, "upstream response to temporary file \"%s\"", u->tf->name);
    }
    if (u->spill.start == NULL) {
        u->spill.start = sws_ups_buf_alloc(size, r->log);
        if (u->spill.start == NULL) {
            u->spill_done = 1;
            return SWS_DECLINED;
        }
        u->spill.end = u->spill.start + size;
    }
    u->spill.last = u->spill.start;
    u->spilling = 1;
    return SWS_OK;
}

/* Decoded body bytes [from, to) of the spill buffer: to the file. */
sws_int_t
sws_ups_spill_write(sws_http_upstream_t *u, u_char *from, u_char *to)
{
    if (from < to && sws_http_temp_file_write(u->tf, from, (size_t) (to - from)) != SWS_OK) {
        u->spill_failed = 1;
        return SWS_ERROR;
    }
    if (u->tf->offset >= u->conf->max_temp_file_size) {
        u->spilling = 0;             /* full: the memory buffers again */
        u->spill_done = 1;
    }
    return SWS_OK;
}

/* What the file holds and was not passed on yet: one file buffer, pending. */
sws_int_t
sws_ups_spill_queue(sws_http_upstream_t *u)
{
    if (u->tf == NULL || u->file_queued == u->tf->offset) {
        return SWS_OK;
    }
    if (sws_ups_add_file(u, u->tf->fd, u->file_queued, u->tf->offset) != SWS_OK) {
        return SWS_ERROR;
    }
    u->file_queued = u->tf->offset;
    return SWS_OK;
}

void
sws_ups_spill_cleanup(sws_http_upstream_t *u)
{
    if (u->spill.start) {
        sws_ups_buf_free(u->spill.start, (size_t) (u->spill.end - u->spill.start));
        u->spill.start = NULL;
    }
}
