/*
 * Red-black tree with a caller-supplied sentinel (a black leaf shared by all
 * nodes of the tree). Colors: 1 = red, 0 = black. The insert callback places
 * a node as a red leaf; this file rebalances.
 */
#include <scalws/sws_rbtree.h>

#define sws_rbt_red(n)        ((n)->color = 1)
#define sws_rbt_black(n)      ((n)->color = 0)
#define sws_rbt_is_red(n)     ((n)->color)
#define sws_rbt_is_black(n)   (!sws_rbt_is_red(n))


void
sws_rbtree_init(sws_rbtree_t *tree, sws_rbtree_node_t *sentinel, sws_rbtree_insert_pt insert)
{
    sws_rbt_black(sentinel);
    sentinel->left = sentinel->right = sentinel->parent = NULL;
    tree->root = sentinel;
    tree->sentinel = sentinel;
    tree->insert = insert;
}


static inline void
sws_rbt_replace_child(sws_rbtree_t *tree, sws_rbtree_node_t *old, sws_rbtree_node_t *new)
{
    sws_rbtree_node_t  *parent = old->parent;

    if (old == tree->root) {
        tree->root = new;
    } else if (old == parent->left) {
        parent->left = new;
    } else {
        parent->right = new;
    }
    new->parent = parent;
}


/* x's right child takes x's place; x becomes its left child. */
static void
sws_rbt_rotate_left(sws_rbtree_t *tree, sws_rbtree_node_t *x)
{
    sws_rbtree_node_t  *y = x->right;

    x->right = y->left;
    if (y->left != tree->sentinel) {
        y->left->parent = x;
    }
    sws_rbt_replace_child(tree, x, y);
    y->left = x;
    x->parent = y;
}


static void
sws_rbt_rotate_right(sws_rbtree_t *tree, sws_rbtree_node_t *x)
{
    sws_rbtree_node_t  *y = x->left;

    x->left = y->right;
    if (y->right != tree->sentinel) {
        y->right->parent = x;
    }
    sws_rbt_replace_child(tree, x, y);
    y->right = x;
    x->parent = y;
}


void
sws_rbtree_insert(sws_rbtree_t *tree, sws_rbtree_node_t *node)
{
    sws_rbtree_node_t  *sentinel = tree->sentinel, *parent, *grand, *uncle;

    if (tree->root == sentinel) {
        node->parent = NULL;
        node->left = node->right = sentinel;
        sws_rbt_black(node);
        tree->root = node;
        return;
    }

    tree->insert(tree->root, node, sentinel);

    /* Fix a red node under a red parent, walking up. */
    while (node != tree->root && sws_rbt_is_red(node->parent)) {
        parent = node->parent;
        grand = parent->parent;          /* exists: the root is black */

        if (parent == grand->left) {
            uncle = grand->right;
            if (sws_rbt_is_red(uncle)) {
                sws_rbt_black(parent);
                sws_rbt_black(uncle);
                sws_rbt_red(grand);
                node = grand;
                continue;
            }
            if (node == parent->right) {
                sws_rbt_rotate_left(tree, parent);
                node = parent;
                parent = node->parent;
            }
            sws_rbt_black(parent);
            sws_rbt_red(grand);
            sws_rbt_rotate_right(tree, grand);

        } else {
            uncle = grand->left;
            if (sws_rbt_is_red(uncle)) {
                sws_rbt_black(parent);
                sws_rbt_black(uncle);
                sws_rbt_red(grand);
                node = grand;
                continue;
            }
            if (node == parent->left) {
                sws_rbt_rotate_right(tree, parent);
                node = parent;
                parent = node->parent;
            }
            sws_rbt_black(parent);
            sws_rbt_red(grand);
            sws_rbt_rotate_left(tree, grand);
        }
    }
    sws_rbt_black(tree->root);
}


void
sws_rbtree_insert_value(sws_rbtree_node_t *root, sws_rbtree_node_t *node,
    sws_rbtree_node_t *sentinel)
{
    sws_rbtree_node_t  **link, *temp = root;

    for ( ;; ) {
        link = (node->key < temp->key) ? &temp->left : &temp->right;
        if (*link == sentinel) {
            break;
        }
        temp = *link;
    }
    *link = node;
    node->parent = temp;
    node->left = node->right = sentinel;
    sws_rbt_red(node);
}


/* Keys are compared as signed differences: a key that wrapped around past
 * zero still sorts after keys just below the maximum. */
void
sws_rbtree_insert_timer_value(sws_rbtree_node_t *root, sws_rbtree_node_t *node,
    sws_rbtree_node_t *sentinel)
{
    sws_rbtree_node_t  **link, *temp = root;

    for ( ;; ) {
        link = ((sws_int_t) (node->key - temp->key) < 0) ? &temp->left : &temp->right;
        if (*link == sentinel) {
            break;
        }
        temp = *link;
    }
    *link = node;
    node->parent = temp;
    node->left = node->right = sentinel;
    sws_rbt_red(node);
}


void
sws_rbtree_delete(sws_rbtree_t *tree, sws_rbtree_node_t *node)
{
    sws_rbtree_node_t  *sentinel = tree->sentinel, *x, *y, *w;
    int                 removed_black;

    /* y: the node actually unlinked (node itself or its successor);
     * x: the child moving into y's place (possibly the sentinel, whose
     * parent pointer is set temporarily for the fix-up). */
    if (node->left == sentinel || node->right == sentinel) {
        y = node;
    } else {
        y = sws_rbtree_min(node->right, sentinel);
    }
    x = (y->left != sentinel) ? y->left : y->right;
    removed_black = sws_rbt_is_black(y);

    if (y == node) {
        sws_rbt_replace_child(tree, y, x);
    } else {
        /* Unlink successor y, then put it where node was. */
        if (y->parent == node) {
            x->parent = y;
        } else {
            sws_rbt_replace_child(tree, y, x);
            y->right = node->right;
            y->right->parent = y;
        }
        sws_rbt_replace_child(tree, node, y);
        y->left = node->left;
        y->left->parent = y;
        y->color = node->color;
    }

    node->left = node->right = node->parent = NULL;

    if (!removed_black) {
        return;
    }

    /* x carries an extra black: push it up or resolve it with rotations. */
    while (x != tree->root && sws_rbt_is_black(x)) {
        if (x == x->parent->left) {
            w = x->parent->right;
            if (sws_rbt_is_red(w)) {
                sws_rbt_black(w);
                sws_rbt_red(x->parent);
                sws_rbt_rotate_left(tree, x->parent);
                w = x->parent->right;
            }
            if (sws_rbt_is_black(w->left) && sws_rbt_is_black(w->right)) {
                sws_rbt_red(w);
                x = x->parent;
                continue;
            }
            if (sws_rbt_is_black(w->right)) {
                sws_rbt_black(w->left);
                sws_rbt_red(w);
                sws_rbt_rotate_right(tree, w);
                w = x->parent->right;
            }
            w->color = x->parent->color;
            sws_rbt_black(x->parent);
            sws_rbt_black(w->right);
            sws_rbt_rotate_left(tree, x->parent);
            x = tree->root;

        } else {
            w = x->parent->left;
            if (sws_rbt_is_red(w)) {
                sws_rbt_black(w);
                sws_rbt_red(x->parent);
                sws_rbt_rotate_right(tree, x->parent);
                w = x->parent->left;
            }
            if (sws_rbt_is_black(w->left) && sws_rbt_is_black(w->right)) {
                sws_rbt_red(w);
                x = x->parent;
                continue;
            }
            if (sws_rbt_is_black(w->left)) {
                sws_rbt_black(w->right);
                sws_rbt_red(w);
                sws_rbt_rotate_left(tree, w);
                w = x->parent->left;
            }
            w->color = x->parent->color;
            sws_rbt_black(x->parent);
            sws_rbt_black(w->left);
            sws_rbt_rotate_right(tree, x->parent);
            x = tree->root;
        }
    }
    sws_rbt_black(x);
}


sws_rbtree_node_t *
sws_rbtree_min(sws_rbtree_node_t *node, sws_rbtree_node_t *sentinel)
{
    while (node->left != sentinel) {
        node = node->left;
    }
    return node;
}


sws_rbtree_node_t *
sws_rbtree_next(sws_rbtree_t *tree, sws_rbtree_node_t *node)
{
    sws_rbtree_node_t  *sentinel = tree->sentinel, *parent;

    if (node->right != sentinel) {
        return sws_rbtree_min(node->right, sentinel);
    }
    for ( ;; ) {
        parent = node->parent;
        if (node == tree->root || parent == NULL) {
            return NULL;
        }
        if (node == parent->left) {
            return parent;
        }
        node = parent;
    }
}
