/* Intrusive doubly-linked circular queue (header-only). */
#ifndef SWS_QUEUE_H
#define SWS_QUEUE_H

#include <stddef.h>

typedef struct sws_queue_s sws_queue_t;
struct sws_queue_s {
    sws_queue_t *prev;
    sws_queue_t *next;
};

#define sws_queue_init(q)   do { (q)->prev = q; (q)->next = q; } while (0)
#define sws_queue_empty(h)  ((h) == (h)->prev)
#define sws_queue_insert_head(h, x) \
    do { (x)->next = (h)->next; (x)->next->prev = x; (x)->prev = h; (h)->next = x; } while (0)
#define sws_queue_insert_tail(h, x) \
    do { (x)->prev = (h)->prev; (x)->prev->next = x; (x)->next = h; (h)->prev = x; } while (0)
#define sws_queue_head(h)   (h)->next
#define sws_queue_last(h)   (h)->prev
#define sws_queue_sentinel(h) (h)
#define sws_queue_next(q)   (q)->next
#define sws_queue_prev(q)   (q)->prev
#define sws_queue_remove(x) \
    do { (x)->next->prev = (x)->prev; (x)->prev->next = (x)->next; \
         (x)->prev = NULL; (x)->next = NULL; } while (0)
#define sws_queue_data(q, type, link) \
    ((type *) ((u_char *) (q) - offsetof(type, link)))

#endif
