/* Timers: a red-black tree of events keyed by their expiry (monotonic ms). */
#include "sws_event.h"
#include "sws_times_internal.h"

/* Re-arming a timer to within this many ms of where it is leaves it where
 * it is: keep-alive and body timers are re-armed on every request. */
#define SWS_TIMER_LAZY  100

static sws_rbtree_t       sws_timers;
static sws_rbtree_node_t  sws_timer_sentinel;

void
sws_event_timer_init(void)
{
    sws_rbtree_init(&sws_timers, &sws_timer_sentinel, sws_rbtree_insert_timer_value);
}

void
sws_add_timer(sws_event_t *ev, sws_msec_t ms)
{
    sws_uint_t key = (sws_uint_t) (sws_now_msec() + ms);

    if (ev->timer_set) {
        sws_int_t diff = (sws_int_t) (key - ev->timer.key);
        if (diff > -SWS_TIMER_LAZY && diff < SWS_TIMER_LAZY) {
            return;
        }
        sws_del_timer(ev);
    }
    ev->timer.key = key;
    sws_rbtree_insert(&sws_timers, &ev->timer);
    ev->timer_set = 1;
}

void
sws_del_timer(sws_event_t *ev)
{
    if (!ev->timer_set) {
        return;
    }
    sws_rbtree_delete(&sws_timers, &ev->timer);
    ev->timer.left = ev->timer.right = ev->timer.parent = NULL;
    ev->timer_set = 0;
}

sws_msec_t
sws_event_find_timer(void)
{
    sws_rbtree_node_t *node;
    sws_int_t          timer;

    if (sws_timers.root == &sws_timer_sentinel) {
        return -1;
    }
    node = sws_rbtree_min(sws_timers.root, &sws_timer_sentinel);
    timer = (sws_int_t) (node->key - (sws_uint_t) sws_now_msec());
    return timer > 0 ? timer : 0;
}

void
sws_event_expire_timers(void)
{
    sws_rbtree_node_t *node;
    sws_event_t       *ev;

    for ( ;; ) {
        if (sws_timers.root == &sws_timer_sentinel) {
            return;
        }
        node = sws_rbtree_min(sws_timers.root, &sws_timer_sentinel);
        if ((sws_int_t) (node->key - (sws_uint_t) sws_now_msec()) > 0) {
            return;
        }
        ev = (sws_event_t *) ((u_char *) node - offsetof(sws_event_t, timer));
        sws_del_timer(ev);
        ev->timedout = 1;
        ev->handler(ev);
    }
}

/* ---- posted events: run after the current batch of I/O events ---- */

static sws_queue_t sws_posted = { &sws_posted, &sws_posted };

void
sws_post_event(sws_event_t *ev)
{
    if (!ev->posted) {
        ev->posted = 1;
        sws_queue_insert_tail(&sws_posted, &ev->queue);
    }
}

void
sws_delete_posted_event(sws_event_t *ev)
{
    if (ev->posted) {
        ev->posted = 0;
        sws_queue_remove(&ev->queue);
    }
}

void
sws_event_process_posted(void)
{
    sws_queue_t *q;
    sws_event_t *ev;

    while (!sws_queue_empty(&sws_posted)) {
        q = sws_queue_head(&sws_posted);
        ev = sws_queue_data(q, sws_event_t, queue);
        sws_delete_posted_event(ev);
        ev->handler(ev);
    }
}
