/*
 * The heap a burst of connections leaves free, given back once the worker
 * has been without a new or a closed connection for a second.
 *
 * glibc keeps up to 2 MiB free at the top of the heap (scalwsd.c sets the
 * threshold, so that a response needing a few hundred KiB for a moment
 * does not grow and shrink the heap on every request), and whatever free
 * pages lie between live blocks: after thousands of TLS handshakes (each
 * one's transient buffers, freed between long-lived blocks) and HTTP/2
 * connections giving back their HPACK state while idle, that is resident
 * memory nobody uses (bench/idle: 0.16 to 0.2 KiB per idle TLS
 * connection, measured with malloc_trim() called from gdb). malloc_trim()
 * returns the top beyond its pad and every whole free page inside the
 * heap (madvise), and costs a walk of the free lists: once per quiet
 * second at most, never while connections keep coming.
 */
#include <malloc.h>
#include "sws_event.h"

#define SWS_HEAP_TRIM_QUIET  1000           /* ms without a connection */

static sws_event_t  sws_heap_trim_event;
static sws_uint_t   sws_heap_trim_seen;     /* connections since armed */
static int          sws_heap_trim_on;       /* a worker's loop: timers work */

static void
sws_heap_trim_handler(sws_event_t *ev)
{
    if (sws_heap_trim_seen) {
        sws_heap_trim_seen = 0;             /* not quiet yet */
        sws_add_timer(ev, SWS_HEAP_TRIM_QUIET);
        return;
    }
    (void) malloc_trim(0);
}

void
sws_heap_trim_init(void)
{
    sws_heap_trim_on = 1;
}

void
sws_heap_trim_note(void)
{
    if (!sws_heap_trim_on) {
        return;
    }
    if (sws_heap_trim_event.timer_set) {
        sws_heap_trim_seen++;
        return;
    }
    sws_heap_trim_event.handler = sws_heap_trim_handler;
    sws_heap_trim_seen = 0;
    sws_add_timer(&sws_heap_trim_event, SWS_HEAP_TRIM_QUIET);
}
