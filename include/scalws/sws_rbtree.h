/* Red-black tree keyed by an unsigned integer (timers, caches). */
#ifndef SWS_RBTREE_H
#define SWS_RBTREE_H

#include <scalws/sws_types.h>

typedef struct sws_rbtree_node_s sws_rbtree_node_t;
struct sws_rbtree_node_s {
    sws_uint_t          key;
    sws_rbtree_node_t  *left;
    sws_rbtree_node_t  *right;
    sws_rbtree_node_t  *parent;
    u_char              color;
    u_char              data;
};

typedef struct sws_rbtree_s sws_rbtree_t;
typedef void (*sws_rbtree_insert_pt)(sws_rbtree_node_t *root,
    sws_rbtree_node_t *node, sws_rbtree_node_t *sentinel);

struct sws_rbtree_s {
    sws_rbtree_node_t     *root;
    sws_rbtree_node_t     *sentinel;
    sws_rbtree_insert_pt   insert;
};

void sws_rbtree_init(sws_rbtree_t *tree, sws_rbtree_node_t *sentinel, sws_rbtree_insert_pt insert);
void sws_rbtree_insert(sws_rbtree_t *tree, sws_rbtree_node_t *node);
void sws_rbtree_delete(sws_rbtree_t *tree, sws_rbtree_node_t *node);
/* Insert functions: plain key order, and timer order (wrap-around safe). */
void sws_rbtree_insert_value(sws_rbtree_node_t *root, sws_rbtree_node_t *node, sws_rbtree_node_t *sentinel);
void sws_rbtree_insert_timer_value(sws_rbtree_node_t *root, sws_rbtree_node_t *node, sws_rbtree_node_t *sentinel);
sws_rbtree_node_t *sws_rbtree_min(sws_rbtree_node_t *node, sws_rbtree_node_t *sentinel);
sws_rbtree_node_t *sws_rbtree_next(sws_rbtree_t *tree, sws_rbtree_node_t *node);

#endif
