/*
 * QUIC connections on a worker's UDP socket: each datagram goes to the
 * connection its destination connection ID names (the worker's table of
 * server IDs); an Initial for none makes a new one (after a Retry round
 * trip with quic_retry on); a short-header packet for none is answered
 * with a stateless reset; anything else (garbage, truncated, unknown
 * versions' long headers that are too short) is dropped where it is
 * looked at, without keeping anything. What a connection has to send is
 * written once per batch of datagrams (a posted event), as GSO trains
 * where the kernel takes them, and its timer is ngtcp2's next expiry.
 */
#include <time.h>
#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include "sws_http_v3.h"
#include "sws_http_ssl.h"
#include "sws_process.h"

/* How a new client fares against the handshakes already in progress. */
#define SWS_H3_ROOM   0               /* welcome */
#define SWS_H3_BUSY   1               /* its address proven first: a Retry */
#define SWS_H3_FULL   2               /* not now (its Initial comes again) */

/* The worker's connections and their IDs. */
static sws_rbtree_t       sws_h3_cids;
static sws_rbtree_node_t  sws_h3_cids_sentinel;
static sws_queue_t        sws_h3_conns;
static sws_queue_t        sws_h3_half_open;   /* handshakes in progress */
static unsigned           sws_h3_ready;
/* $connection of QUIC connections: numbered apart from TCP ones, from
 * 2^40 up in each worker, so that the two never meet. */
static uint64_t           sws_h3_number = (uint64_t) 1 << 40;

static void sws_http_v3_close(sws_http_v3_conn_t *qc);
static void sws_http_v3_socket_close(sws_http_v3_addr_t *qa);
static void sws_http_v3_goaway(sws_event_t *ev);
static void sws_http_v3_close_with(sws_http_v3_conn_t *qc, int liberr);
static sws_int_t sws_http_v3_write(sws_http_v3_conn_t *qc);
static int sws_http_v3_path_validation(ngtcp2_conn *conn, uint32_t flags,
    const ngtcp2_path *path, ngtcp2_path_validation_result res, void *user_data);

ngtcp2_tstamp
sws_http_v3_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (ngtcp2_tstamp) ts.tv_sec * NGTCP2_SECONDS + (ngtcp2_tstamp) ts.tv_nsec;
}

static void
sws_http_v3_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void) ctx;
    (void) gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}

/* ---- connection IDs ---- */

/* A new server ID of the layout in sws_http_v3.h. */
static void
sws_http_v3_cid_make(ngtcp2_cid *cid)
{
    uint8_t b[SWS_H3_CID_LEN];

    b[0] = SWS_H3_CID_MAGIC;
    b[1] = (uint8_t) (sws_worker_slot >> 8);
    b[2] = (uint8_t) sws_worker_slot;
    (void) gnutls_rnd(GNUTLS_RND_NONCE, b + 3, SWS_H3_CID_LEN - 3);
    ngtcp2_cid_init(cid, b, SWS_H3_CID_LEN);
}

static int
sws_http_v3_cid_cmp(const ngtcp2_cid *a, const ngtcp2_cid *b)
{
    if (a->datalen != b->datalen) {
        return a->datalen < b->datalen ? -1 : 1;
    }
    return memcmp(a->data, b->data, a->datalen);
}

/* The tree is ordered by hash, then by the ID's bytes. */
static void
sws_http_v3_cid_insert(sws_rbtree_node_t *temp, sws_rbtree_node_t *node,
    sws_rbtree_node_t *sentinel)
{
    sws_rbtree_node_t **p;
    sws_http_v3_cid_t  *a, *b;

    for ( ;; ) {
        if (node->key != temp->key) {
            p = node->key < temp->key ? &temp->left : &temp->right;
        } else {
            a = (sws_http_v3_cid_t *) node;
            b = (sws_http_v3_cid_t *) temp;
            p = sws_http_v3_cid_cmp(&a->cid, &b->cid) < 0 ? &temp->left : &temp->right;
        }
        if (*p == sentinel) {
            break;
        }
        temp = *p;
    }
    *p = node;
    node->parent = temp;
    node->left = sentinel;
    node->right = sentinel;
    node->color = 1;                    /* red */
}

static void
sws_http_v3_tables_init(void)
{
    if (!sws_h3_ready) {
        sws_rbtree_init(&sws_h3_cids, &sws_h3_cids_sentinel, sws_http_v3_cid_insert);
        sws_queue_init(&sws_h3_conns);
        sws_queue_init(&sws_h3_half_open);
        sws_h3_ready = 1;
    }
}

static sws_http_v3_conn_t *
sws_http_v3_find(const uint8_t *p, size_t len)
{
    sws_rbtree_node_t *node = sws_h3_cids.root, *sentinel = sws_h3_cids.sentinel;
    sws_http_v3_cid_t *c;
    ngtcp2_cid         cid;
    sws_uint_t         key;
    int                rc;

    if (len > NGTCP2_MAX_CIDLEN) {
        return NULL;
    }
    ngtcp2_cid_init(&cid, p, len);
    key = sws_hash_key(p, len);
    while (node != sentinel) {
        if (key != node->key) {
            node = key < node->key ? node->left : node->right;
            continue;
        }
        c = (sws_http_v3_cid_t *) node;
        rc = sws_http_v3_cid_cmp(&cid, &c->cid);
        if (rc == 0) {
            return c->qc;
        }
        node = rc < 0 ? node->left : node->right;
    }
    return NULL;
}

static sws_int_t
sws_http_v3_cid_add(sws_http_v3_conn_t *qc, const ngtcp2_cid *cid)
{
    sws_http_v3_cid_t *c;
    sws_queue_t       *q;

    if (!sws_queue_empty(&qc->cid_free)) {
        q = sws_queue_head(&qc->cid_free);
        sws_queue_remove(q);
        c = sws_queue_data(q, sws_http_v3_cid_t, queue);
    } else {
        c = sws_palloc(qc->pool, sizeof(sws_http_v3_cid_t));
        if (c == NULL) {
            return SWS_ERROR;
        }
    }
    c->cid = *cid;
    c->qc = qc;
    c->node.key = sws_hash_key(cid->data, cid->datalen);
    sws_rbtree_insert(&sws_h3_cids, &c->node);
    sws_queue_insert_tail(&qc->cids, &c->queue);
    return SWS_OK;
}

static void
sws_http_v3_cid_remove(sws_http_v3_conn_t *qc, const ngtcp2_cid *cid)
{
    sws_queue_t       *q;
    sws_http_v3_cid_t *c;

    for (q = sws_queue_head(&qc->cids); q != sws_queue_sentinel(&qc->cids);
         q = sws_queue_next(q))
    {
        c = sws_queue_data(q, sws_http_v3_cid_t, queue);
        if (sws_http_v3_cid_cmp(&c->cid, cid) == 0) {
            sws_rbtree_delete(&sws_h3_cids, &c->node);
            sws_queue_remove(&c->queue);
            sws_queue_insert_tail(&qc->cid_free, &c->queue);
            return;
        }
    }
}

/* ---- ngtcp2's callbacks of the connection ---- */

static int
sws_http_v3_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
    void *user_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    (void) cidlen;                      /* ours are SWS_H3_CID_LEN */
    sws_http_v3_cid_make(cid);
    if (ngtcp2_crypto_generate_stateless_reset_token(token, qc->qa->key, SWS_H3_KEY_LEN, cid)
        != 0 || sws_http_v3_cid_add(qc, cid) != SWS_OK)
    {
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int
sws_http_v3_remove_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user_data)
{
    (void) conn;
    sws_http_v3_cid_remove(user_data, cid);
    return 0;
}

/* ---- handshakes in progress ---- */

static int
sws_http_v3_same_ip(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_INET6) {
        return memcmp(&((const struct sockaddr_in6 *) a)->sin6_addr,
                      &((const struct sockaddr_in6 *) b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    }
    return ((const struct sockaddr_in *) a)->sin_addr.s_addr
           == ((const struct sockaddr_in *) b)->sin_addr.s_addr;
}

/* Half-open connections cost a TLS handshake's work and memory each
 * and ask nothing of a client that need not even have its address: a
 * worker keeps at most quic_max_handshakes of them on an address, and
 * at most quic_max_handshakes_per_address from one client address (its
 * port aside). Past half the first, or at the second, a new client
 * proves its address with a Retry first, which keeps no state here: a
 * flood of Initials from addresses that do not answer stops at that. */
static sws_uint_t
sws_http_v3_handshakes_load(sws_http_v3_addr_t *qa, const struct sockaddr_storage *peer)
{
    sws_http_v3_srv_conf_t *conf = qa->conf;
    sws_http_v3_conn_t     *qc;
    sws_queue_t            *q;
    sws_uint_t              n = 0;

    if (qa->nhandshakes >= conf->max_handshakes) {
        return SWS_H3_FULL;
    }
    for (q = sws_queue_head(&sws_h3_half_open); q != sws_queue_sentinel(&sws_h3_half_open);
         q = sws_queue_next(q))
    {
        qc = sws_queue_data(q, sws_http_v3_conn_t, half_open);
        if (qc->qa == qa && sws_http_v3_same_ip(&qc->peer, peer)
            && ++n >= conf->max_handshakes_addr)
        {
            return SWS_H3_FULL;
        }
    }
    return qa->nhandshakes >= conf->max_handshakes / 2 ? SWS_H3_BUSY : SWS_H3_ROOM;
}

/* The handshake is over (done, or the connection gone). */
static void
sws_http_v3_handshake_over(sws_http_v3_conn_t *qc)
{
    if (!qc->handshake) {
        qc->handshake = 1;
        sws_queue_remove(&qc->half_open);
        qc->qa->nhandshakes--;
    }
}

/* HTTP/3 starts on the connection (at the 1-RTT keys, the first 0-RTT
 * data or the handshake's end, whichever comes first). A worker that began
 * to stop before gives the GOAWAY notice at once. */
static sws_int_t
sws_http_v3_begin(sws_http_v3_conn_t *qc)
{
    if (sws_http_v3_h3_start(qc) != SWS_OK) {
        return SWS_ERROR;
    }
    if (qc->draining && nghttp3_conn_submit_shutdown_notice(qc->h3) != 0) {
        return SWS_ERROR;
    }
    return SWS_OK;
}

static int
sws_http_v3_handshake_completed(ngtcp2_conn *conn, void *user_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    sws_http_v3_handshake_over(qc);
    if ((qc->h3 == NULL && sws_http_v3_begin(qc) != SWS_OK)
        || sws_http_v3_tls_ticket(qc) != SWS_OK)
    {
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

/* The 1-RTT keys are there (the server's flight is made): HTTP/3 starts
 * and its streams go with the server's first 1-RTT packets. (The requests
 * of 0-RTT may come before: their data starts it then.) */
static int
sws_http_v3_recv_rx_key(ngtcp2_conn *conn, ngtcp2_crypto_level level, void *user_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION || qc->h3) {
        return 0;
    }
    return sws_http_v3_begin(qc) == SWS_OK ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int
sws_http_v3_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t id, uint64_t offset,
    const uint8_t *data, size_t len, void *user_data, void *stream_data)
{
    sws_http_v3_conn_t *qc = user_data;
    nghttp3_ssize       n;

    (void) offset;
    (void) stream_data;
    if (qc->h3 == NULL && sws_http_v3_begin(qc) != SWS_OK) {
        /* (0-RTT stream data comes before the 1-RTT keys) */
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    n = nghttp3_conn_read_stream(qc->h3, id, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0) {
        /* RFC 9114 / 9204 say which code: nghttp3 knows it. */
        sws_http_v3_conn_error(qc, nghttp3_err_infer_quic_app_error_code((int) n),
                               nghttp3_strerror((int) n));
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    /* What nghttp3 took for itself (frames, fields); body data is given
     * back as the request takes it (sws_http_v3_consume). */
    ngtcp2_conn_extend_max_stream_offset(conn, id, (uint64_t) n);
    ngtcp2_conn_extend_max_offset(conn, (uint64_t) n);
    return 0;
}

static int
sws_http_v3_acked_stream_data(ngtcp2_conn *conn, int64_t id, uint64_t offset, uint64_t len,
    void *user_data, void *stream_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    (void) offset;
    (void) stream_data;
    if (qc->h3 && nghttp3_conn_add_ack_offset(qc->h3, id, len) != 0) {
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int
sws_http_v3_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t id, uint64_t code,
    void *user_data, void *stream_data)
{
    sws_http_v3_conn_t *qc = user_data;
    int                 rv;

    (void) stream_data;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET)) {
        code = NGHTTP3_H3_NO_ERROR;
    }
    if (qc->h3) {
        rv = nghttp3_conn_close_stream(qc->h3, id, code);
        if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) {
            sws_http_v3_conn_error(qc, nghttp3_err_infer_quic_app_error_code(rv),
                                   nghttp3_strerror(rv));
            return NGTCP2_ERR_CALLBACK_FAILURE;
        }
    }
    if ((id & 0x3) == 0) {
        /* a client's request stream: room for another (RFC 9000 4.6) */
        ngtcp2_conn_extend_max_streams_bidi(conn, 1);
    }
    return 0;
}

static int
sws_http_v3_stream_reset(ngtcp2_conn *conn, int64_t id, uint64_t final_size, uint64_t code,
    void *user_data, void *stream_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    (void) final_size;
    (void) code;
    (void) stream_data;
    if (qc->h3 && nghttp3_conn_shutdown_stream_read(qc->h3, id) != 0) {
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

/* The client does not want the rest of a response: ngtcp2 resets our
 * side; nghttp3 stops reading the stream too. */
static int
sws_http_v3_stream_stop_sending(ngtcp2_conn *conn, int64_t id, uint64_t code, void *user_data,
    void *stream_data)
{
    return sws_http_v3_stream_reset(conn, id, 0, code, user_data, stream_data);
}

static int
sws_http_v3_extend_max_stream_data(ngtcp2_conn *conn, int64_t id, uint64_t max_data,
    void *user_data, void *stream_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    (void) max_data;
    (void) stream_data;
    if (qc->h3 && nghttp3_conn_unblock_stream(qc->h3, id) != 0) {
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int
sws_http_v3_extend_max_remote_streams_bidi(ngtcp2_conn *conn, uint64_t max, void *user_data)
{
    sws_http_v3_conn_t *qc = user_data;

    (void) conn;
    if (qc->h3) {
        nghttp3_conn_set_max_client_streams_bidi(qc->h3, max);
    }
    return 0;
}

static const ngtcp2_callbacks sws_http_v3_callbacks = {
    .recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
    .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
    .handshake_completed = sws_http_v3_handshake_completed,
    .recv_rx_key = sws_http_v3_recv_rx_key,
    .path_validation = sws_http_v3_path_validation,
    .encrypt = ngtcp2_crypto_encrypt_cb,
    .decrypt = ngtcp2_crypto_decrypt_cb,
    .hp_mask = ngtcp2_crypto_hp_mask_cb,
    .recv_stream_data = sws_http_v3_recv_stream_data,
    .acked_stream_data_offset = sws_http_v3_acked_stream_data,
    .stream_close = sws_http_v3_stream_close,
    .rand = sws_http_v3_rand,
    .get_new_connection_id = sws_http_v3_new_cid,
    .remove_connection_id = sws_http_v3_remove_cid,
    .update_key = ngtcp2_crypto_update_key_cb,
    .stream_reset = sws_http_v3_stream_reset,
    .extend_max_remote_streams_bidi = sws_http_v3_extend_max_remote_streams_bidi,
    .extend_max_stream_data = sws_http_v3_extend_max_stream_data,
    .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
    .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
    .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
    .stream_stop_sending = sws_http_v3_stream_stop_sending,
    .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

/* ---- the session ---- */

static sws_int_t
sws_http_v3_transport_info(sws_http_session_t *s, sws_http_transport_info_t *info)
{
    sws_http_v3_conn_t *qc = (sws_http_v3_conn_t *) ((u_char *) s
                                                      - offsetof(sws_http_v3_conn_t, session));
    ngtcp2_conn_stat    st;

    if (qc->conn == NULL) {
        return SWS_DECLINED;
    }
    ngtcp2_conn_get_conn_stat(qc->conn, &st);
    info->rtt = (uint32_t) (st.smoothed_rtt / 1000);
    info->rttvar = (uint32_t) (st.rttvar / 1000);
    info->snd_cwnd = (uint32_t) (st.cwnd / SWS_H3_MAX_UDP);
    info->rcv_space = 0;
    return SWS_OK;
}

static sws_int_t
sws_http_v3_transport_local_addr(sws_http_session_t *s, struct sockaddr_storage *sa)
{
    sws_http_v3_conn_t *qc = (sws_http_v3_conn_t *) ((u_char *) s
                                                      - offsetof(sws_http_v3_conn_t, session));

    sws_memcpy(sa, &qc->local, qc->locallen);
    return SWS_OK;
}

/* A request whose head is complete before the handshake is came in 0-RTT
 * (1-RTT packets are not read before then). */
static int
sws_http_v3_transport_tls_early(sws_http_session_t *s)
{
    sws_http_v3_conn_t *qc = (sws_http_v3_conn_t *) ((u_char *) s
                                                      - offsetof(sws_http_v3_conn_t, session));

    return !qc->handshake && sws_http_v3_tls_early(qc);
}

static const sws_http_transport_t sws_http_v3_transport = {
    .name = "quic",
    .info = sws_http_v3_transport_info,
    .local_addr = sws_http_v3_transport_local_addr,
    .tls_early = sws_http_v3_transport_tls_early,
};

/* The session's client address in text, of qc->peer. */
static sws_int_t
sws_http_v3_addr_text(sws_http_v3_conn_t *qc)
{
    char        text[INET6_ADDRSTRLEN];
    const void *a;

    a = qc->peer.ss_family == AF_INET6
        ? (const void *) &((struct sockaddr_in6 *) &qc->peer)->sin6_addr
        : (const void *) &((struct sockaddr_in *) &qc->peer)->sin_addr;
    if (inet_ntop(qc->peer.ss_family, a, text, sizeof(text)) == NULL) {
        return SWS_ERROR;
    }
    return sws_str_from_cstr(qc->pool, &qc->session.addr_text, text);
}

static sws_int_t
sws_http_v3_session_init(sws_http_v3_conn_t *qc)
{
    sws_http_session_t *s = &qc->session;

    if (sws_http_v3_addr_text(qc) != SWS_OK) {
        return SWS_ERROR;
    }
    s->connection = qc->us->connection;     /* the socket's: nothing is its own */
    s->transport = &sws_http_v3_transport;
    s->addr = qc->qa->addr;
    s->listening = qc->us->listening;
    s->log = qc->us->log;
    s->sockaddr = (struct sockaddr *) &qc->peer;
    s->socklen = qc->peerlen;
    s->number = qc->number;
    s->start_msec = sws_current_msec();
    s->cscf = qc->qa->addr->default_server->ctx->srv_conf[sws_http_core_module.index];
    return SWS_OK;
}

/* The client moved and its new path is validated (RFC 9000 9): the
 * session's addresses become the path's, as nginx's connection address
 * follows a migration ($remote_addr, $remote_port, $server_addr). */
static int
sws_http_v3_path_validation(ngtcp2_conn *conn, uint32_t flags, const ngtcp2_path *path,
    ngtcp2_path_validation_result res, void *user_data)
{
    sws_http_v3_conn_t *qc = user_data;
    const ngtcp2_path  *now = ngtcp2_conn_get_path(conn);

    (void) flags;
    if (res != NGTCP2_PATH_VALIDATION_RESULT_SUCCESS
        || path->remote.addrlen != now->remote.addrlen
        || memcmp(path->remote.addr, now->remote.addr, path->remote.addrlen) != 0
        || path->remote.addrlen > sizeof(qc->peer) || path->local.addrlen > sizeof(qc->local)
        || (path->remote.addrlen == qc->peerlen
            && memcmp(path->remote.addr, &qc->peer, qc->peerlen) == 0))
    {
        return 0;                       /* not the path in use, or no move */
    }
    sws_memcpy(&qc->peer, path->remote.addr, path->remote.addrlen);
    qc->peerlen = path->remote.addrlen;
    sws_memcpy(&qc->local, path->local.addr, path->local.addrlen);
    qc->locallen = path->local.addrlen;
    qc->session.socklen = qc->peerlen;
    sws_log_debug(qc->session.log, "QUIC connection migrated");
    return sws_http_v3_addr_text(qc) == SWS_OK ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

/* ---- sending ---- */

static void
sws_http_v3_send_one(sws_udp_socket_t *us, sws_udp_dgram_t *like, u_char *data, size_t len)
{
    sws_udp_dgram_t d = *like;

    d.data = data;
    d.len = len;
    d.segment = 0;
    d.ecn = 0;
    (void) sws_udp_send(us, &d, 1);
}

/* A datagram answered without a connection: to where it came from, from
 * the address it was sent to. */
static void
sws_http_v3_reply(sws_udp_socket_t *us, sws_udp_dgram_t *in, u_char *data, size_t len)
{
    sws_http_v3_send_one(us, in, data, len);
}

static void
sws_http_v3_set_timer(sws_http_v3_conn_t *qc)
{
    ngtcp2_tstamp expiry = ngtcp2_conn_get_expiry(qc->conn), now = sws_http_v3_now();

    if (qc->more) {
        expiry = now;                   /* its next turn (sws_http_v3_write) */
    }
    if (expiry == UINT64_MAX) {
        sws_del_timer(&qc->timer);
        return;
    }
    /* exact: a lazy timer would delay acknowledgements and recovery */
    sws_del_timer(&qc->timer);
    sws_add_timer(&qc->timer, expiry <= now ? 0
                  : (sws_msec_t) ((expiry - now + NGTCP2_MILLISECONDS - 1)
                                  / NGTCP2_MILLISECONDS));
}

static int
sws_http_v3_same_path(const sws_udp_dgram_t *d, const ngtcp2_path *path)
{
    return d->peerlen == path->remote.addrlen
           && memcmp(&d->peer, path->remote.addr, d->peerlen) == 0
           && d->locallen == path->local.addrlen
           && memcmp(&d->local, path->local.addr, d->locallen) == 0;
}

/* What ngtcp2 and nghttp3 have to send, in rounds of up to SWS_H3_TRAIN
 * datagrams: packets of one path and ECN mark, of one size but the last,
 * go as one GSO train (quic_gso on and the kernel able). After
 * SWS_H3_ROUNDS full rounds the connection yields: the rest goes on the
 * next turn of the event loop (a timer of 0), once the datagrams that came
 * meanwhile are read and the other connections have had their rounds, so
 * that one connection with a large congestion window does not hold the
 * others (and its own acknowledgements) up. */
static sws_int_t
sws_http_v3_write(sws_http_v3_conn_t *qc)
{
    u_char               buf[SWS_H3_TRAIN * SWS_H3_MAX_UDP];
    sws_udp_dgram_t      d[SWS_H3_TRAIN];
    ngtcp2_path_storage  ps;
    ngtcp2_pkt_info      pi;
    nghttp3_vec          vec[16];
    ngtcp2_ssize         n, datalen;
    nghttp3_ssize        nvec;
    ngtcp2_tstamp        now = sws_http_v3_now();
    size_t               off, max;
    sws_uint_t           npkts, nd, rounds = 0;
    int64_t              id;
    int                  fin, gso = qc->qa->conf->gso && qc->us->gso, joined;
    uint32_t             flags;

    qc->more = 0;
    ngtcp2_path_storage_zero(&ps);
    /* Room for the largest datagram, not the path's current one: ngtcp2
     * keeps its packets to the path's size by itself, and its path MTU
     * probes need the room (with the path's size it never probed, and
     * every packet stayed at 1200 bytes). */
    max = ngtcp2_conn_get_max_tx_udp_payload_size(qc->conn);
    if (max > SWS_H3_MAX_UDP) {
        max = SWS_H3_MAX_UDP;
    }

    for ( ;; ) {
        off = 0;
        npkts = 0;
        nd = 0;
        while (npkts < SWS_H3_TRAIN) {
            id = -1;
            fin = 0;
            nvec = 0;
            if (qc->h3 && ngtcp2_conn_get_max_data_left(qc->conn)) {
                nvec = nghttp3_conn_writev_stream(qc->h3, &id, &fin, vec, 16);
                if (nvec < 0) {
                    sws_http_v3_conn_error(qc, nghttp3_err_infer_quic_app_error_code(
                                               (int) nvec), nghttp3_strerror((int) nvec));
                    sws_http_v3_close_with(qc, NGTCP2_ERR_CALLBACK_FAILURE);
                    return SWS_ERROR;
                }
            }
            flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
            if (fin) {
                flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
            }
            n = ngtcp2_conn_writev_stream(qc->conn, &ps.path, &pi, buf + off, max, &datalen,
                                          flags, id, (const ngtcp2_vec *) vec,
                                          (size_t) nvec, now);
            if (n < 0) {
                switch (n) {
                case NGTCP2_ERR_STREAM_DATA_BLOCKED:
                    nghttp3_conn_block_stream(qc->h3, id);
                    continue;
                case NGTCP2_ERR_STREAM_SHUT_WR:
                    nghttp3_conn_shutdown_stream_write(qc->h3, id);
                    continue;
                case NGTCP2_ERR_WRITE_MORE:
                    if (nghttp3_conn_add_write_offset(qc->h3, id, (size_t) datalen) != 0) {
                        sws_http_v3_close_with(qc, NGTCP2_ERR_INTERNAL);
                        return SWS_ERROR;
                    }
                    continue;
                }
                sws_http_v3_close_with(qc, (int) n);
                return SWS_ERROR;
            }
            if (datalen >= 0 && id >= 0
                && nghttp3_conn_add_write_offset(qc->h3, id, (size_t) datalen) != 0)
            {
                sws_http_v3_close_with(qc, NGTCP2_ERR_INTERNAL);
                return SWS_ERROR;
            }
            if (n == 0) {
                break;
            }
            /* A train takes packets of its size; a shorter one ends it. */
            joined = gso && nd > 0 && d[nd - 1].ecn == (uint8_t) pi.ecn
                     && (size_t) n <= d[nd - 1].segment
                     && d[nd - 1].len % d[nd - 1].segment == 0
                     && sws_http_v3_same_path(&d[nd - 1], &ps.path);
            if (joined) {
                d[nd - 1].len += (size_t) n;
            } else {
                sws_memzero(&d[nd], sizeof(sws_udp_dgram_t));
                d[nd].data = buf + off;
                d[nd].len = (size_t) n;
                d[nd].segment = gso ? (uint16_t) n : 0;
                d[nd].ecn = (uint8_t) pi.ecn;
                sws_memcpy(&d[nd].peer, ps.path.remote.addr, ps.path.remote.addrlen);
                d[nd].peerlen = ps.path.remote.addrlen;
                sws_memcpy(&d[nd].local, ps.path.local.addr, ps.path.local.addrlen);
                d[nd].locallen = ps.path.local.addrlen;
                nd++;
            }
            off += (size_t) n;
            npkts++;
        }
        if (nd) {
            /* What the socket cannot take now is lost, and QUIC's
             * recovery sends it again. */
            (void) sws_udp_send(qc->us, d, nd);
        }
        if (npkts < SWS_H3_TRAIN) {
            break;
        }
        if (++rounds == SWS_H3_ROUNDS) {
            qc->more = 1;
            break;
        }
    }
    ngtcp2_conn_update_pkt_tx_time(qc->conn, now);
    sws_http_v3_set_timer(qc);
    return SWS_OK;
}

/* ---- the end of a connection ---- */

void
sws_http_v3_conn_error(sws_http_v3_conn_t *qc, uint64_t code, const char *why)
{
    if (!qc->app_error_set) {
        if (code != NGHTTP3_H3_NO_ERROR) {
            sws_log_error(SWS_LOG_INFO, qc->session.log, 0,
                          "HTTP/3 connection error 0x%lx: %s", (unsigned long) code, why);
        }
        qc->app_error = code;
        qc->app_error_set = 1;
    }
    qc->closing = 1;
    sws_http_v3_post_write(qc);
}

/* CONNECTION_CLOSE (the HTTP/3 error set, else liberr's transport error)
 * once, then the connection goes. */
static void
sws_http_v3_close_with(sws_http_v3_conn_t *qc, int liberr)
{
    ngtcp2_connection_close_error ccerr;
    ngtcp2_path_storage           ps;
    ngtcp2_pkt_info               pi;
    sws_udp_dgram_t               d;
    u_char                        buf[SWS_H3_MAX_UDP];
    ngtcp2_ssize                  n;

    if (qc->conn && !ngtcp2_conn_is_in_closing_period(qc->conn)
        && !ngtcp2_conn_is_in_draining_period(qc->conn))
    {
        ngtcp2_connection_close_error_default(&ccerr);
        if (qc->app_error_set) {
            ngtcp2_connection_close_error_set_application_error(&ccerr, qc->app_error,
                                                                NULL, 0);
        } else if (liberr == NGTCP2_ERR_CRYPTO) {
            ngtcp2_connection_close_error_set_transport_error_tls_alert(
                &ccerr, ngtcp2_conn_get_tls_alert(qc->conn), NULL, 0);
        } else if (liberr) {
            ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, liberr, NULL, 0);
        }
        ngtcp2_path_storage_zero(&ps);
        n = ngtcp2_conn_write_connection_close(qc->conn, &ps.path, &pi, buf, sizeof(buf),
                                               &ccerr, sws_http_v3_now());
        if (n > 0) {
            sws_memzero(&d, sizeof(d));
            sws_memcpy(&d.peer, ps.path.remote.addr, ps.path.remote.addrlen);
            d.peerlen = ps.path.remote.addrlen;
            sws_memcpy(&d.local, ps.path.local.addr, ps.path.local.addrlen);
            d.locallen = ps.path.local.addrlen;
            sws_http_v3_send_one(qc->us, &d, buf, (size_t) n);
        }
    }
    sws_http_v3_close(qc);
}

static void
sws_http_v3_close(sws_http_v3_conn_t *qc)
{
    sws_queue_t       *q;
    sws_http_v3_cid_t *c;

    /* The requests first: each is ended (cut if not complete), and
     * forgets the connection. */
    sws_http_v3_streams_gone(qc);
    while (!sws_queue_empty(&qc->cids)) {
        q = sws_queue_head(&qc->cids);
        c = sws_queue_data(q, sws_http_v3_cid_t, queue);
        sws_rbtree_delete(&sws_h3_cids, &c->node);
        sws_queue_remove(q);
    }
    sws_del_timer(&qc->timer);
    if (qc->post.posted) {
        sws_delete_posted_event(&qc->post);
    }
    sws_http_v3_handshake_over(qc);
    sws_queue_remove(&qc->queue);
    if (--qc->qa->nconns == 0 && qc->qa->stopping) {
        sws_http_v3_socket_close(qc->qa);
    }
    if (qc->h3) {
        nghttp3_conn_del(qc->h3);
    }
    if (qc->conn) {
        ngtcp2_conn_del(qc->conn);
    }
    if (qc->tls) {
        gnutls_deinit(qc->tls);
    }
    qc->h3 = NULL;
    qc->conn = NULL;
    qc->tls = NULL;
    if (qc->background) {
        qc->gone = 1;                   /* the last background request frees it */
        return;
    }
    sws_pool_destroy(qc->pool);
}

void
sws_http_v3_background_done(sws_http_v3_conn_t *qc)
{
    if (--qc->background == 0 && qc->gone) {
        sws_pool_destroy(qc->pool);
    }
}

/* ---- events ---- */

static void
sws_http_v3_posted(sws_event_t *ev)
{
    sws_http_v3_conn_t *qc = ev->data;

    if (qc->closing) {
        sws_http_v3_close_with(qc, 0);
        return;
    }
    if (sws_http_v3_write(qc) != SWS_OK) {
        return;                         /* closed */
    }
    /* Room was made: producers refill, which may post again. */
    sws_http_v3_write_hooks(qc);
}

void
sws_http_v3_post_write(sws_http_v3_conn_t *qc)
{
    if (!qc->post.posted) {
        sws_post_event(&qc->post);
    }
}

static void
sws_http_v3_timeout(sws_event_t *ev)
{
    sws_http_v3_conn_t *qc = ev->data;
    int                 rv;

    ev->timedout = 0;
    rv = ngtcp2_conn_handle_expiry(qc->conn, sws_http_v3_now());
    if (rv != 0) {
        /* The idle timeout (or the handshake's): gone without a word
         * (RFC 9000 10.1). */
        sws_log_error(SWS_LOG_INFO, qc->session.log, 0, "client %.*s timed out (QUIC %s)",
                      (int) qc->session.addr_text.len, qc->session.addr_text.data,
                      rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT ? "handshake"
                      : rv == NGTCP2_ERR_IDLE_CLOSE ? "idle timeout" : ngtcp2_strerror(rv));
        sws_http_v3_close(qc);
        return;
    }
    /* posted: one write a turn, however many reasons there are for it */
    sws_http_v3_post_write(qc);
}

/* ---- datagrams in ---- */

static void
sws_http_v3_version_negotiation(sws_udp_socket_t *us, sws_udp_dgram_t *d,
    const ngtcp2_version_cid *vc)
{
    uint32_t     versions[] = { NGTCP2_PROTO_VER_V1 };
    u_char       buf[256], r;
    ngtcp2_ssize n;

    /* Only to what could be an Initial (RFC 9000 6.1: no amplification). */
    if (d->len < NGTCP2_MAX_UDP_PAYLOAD_SIZE) {
        return;
    }
    (void) gnutls_rnd(GNUTLS_RND_NONCE, &r, 1);
    n = ngtcp2_pkt_write_version_negotiation(buf, sizeof(buf), r, vc->scid, vc->scidlen,
                                             vc->dcid, vc->dcidlen, versions, 1);
    if (n > 0) {
        sws_http_v3_reply(us, d, buf, (size_t) n);
    }
}

/* RFC 9000 10.3: for a short-header packet of no connection, a reset the
 * client recognises by the token of that ID (the same key made it, in
 * whichever worker), smaller than what triggered it so that two servers
 * cannot loop. */
static void
sws_http_v3_stateless_reset(sws_udp_socket_t *us, sws_udp_dgram_t *d,
    const ngtcp2_version_cid *vc)
{
    sws_http_v3_addr_t *qa = us->data;
    uint8_t             token[NGTCP2_STATELESS_RESET_TOKENLEN], rnd[64];
    u_char              buf[128];
    ngtcp2_cid          cid;
    ngtcp2_ssize        n;
    size_t              len;

    /* Only for IDs of ours (a reset for another's would tell nobody
     * anything) and packets with QUIC's fixed bit: garbage costs a look. */
    if (d->len <= 1 + NGTCP2_MIN_STATELESS_RESET_RANDLEN + NGTCP2_STATELESS_RESET_TOKENLEN
        || !(d->data[0] & 0x40) || vc->dcidlen != SWS_H3_CID_LEN
        || vc->dcid[0] != SWS_H3_CID_MAGIC)
    {
        return;
    }
    len = sws_min(d->len - 1, 43);
    ngtcp2_cid_init(&cid, vc->dcid, vc->dcidlen);
    if (ngtcp2_crypto_generate_stateless_reset_token(token, qa->key, SWS_H3_KEY_LEN, &cid)
        != 0)
    {
        return;
    }
    (void) gnutls_rnd(GNUTLS_RND_NONCE, rnd, len - 1 - NGTCP2_STATELESS_RESET_TOKENLEN);
    n = ngtcp2_pkt_write_stateless_reset(buf, len, token, rnd,
                                         len - 1 - NGTCP2_STATELESS_RESET_TOKENLEN);
    if (n > 0) {
        sws_http_v3_reply(us, d, buf, (size_t) n);
    }
}

/* quic_retry: the client proves its address with a token first. */
static void
sws_http_v3_send_retry(sws_udp_socket_t *us, sws_udp_dgram_t *d, const ngtcp2_pkt_hd *hd)
{
    sws_http_v3_addr_t *qa = us->data;
    uint8_t             token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
    u_char              buf[512];
    ngtcp2_cid          scid;
    ngtcp2_ssize        tl, n;

    sws_http_v3_cid_make(&scid);
    tl = ngtcp2_crypto_generate_retry_token(token, qa->key, SWS_H3_KEY_LEN, hd->version,
                                            (const ngtcp2_sockaddr *) &d->peer, d->peerlen,
                                            &scid, &hd->dcid, sws_http_v3_now());
    if (tl < 0) {
        return;
    }
    n = ngtcp2_crypto_write_retry(buf, sizeof(buf), hd->version, &hd->scid, &scid, &hd->dcid,
                                  token, (size_t) tl);
    if (n > 0) {
        sws_http_v3_reply(us, d, buf, (size_t) n);
    }
}

/* An Initial for no connection: a new one, or NULL (dropped, or a Retry
 * sent). */
static sws_http_v3_conn_t *
sws_http_v3_accept(sws_udp_socket_t *us, sws_udp_dgram_t *d)
{
    sws_http_v3_addr_t        *qa = us->data;
    sws_http_v3_srv_conf_t    *conf = qa->conf;
    sws_http_core_loc_conf_t  *clcf;
    sws_http_v3_conn_t        *qc;
    sws_pool_t                *pool;
    ngtcp2_pkt_hd              hd;
    ngtcp2_settings            settings;
    ngtcp2_transport_params    params;
    ngtcp2_path                path;
    ngtcp2_cid                 scid, odcid;
    ngtcp2_tstamp              now = sws_http_v3_now();
    sws_uint_t                 load;
    int                        retried = 0;

    sws_memzero(&odcid, sizeof(odcid));
    /* Checks the size (1200 at least), the version and the IDs. */
    if (ngtcp2_accept(&hd, d->data, d->len) != 0 || hd.type != NGTCP2_PKT_INITIAL) {
        return NULL;
    }
    load = sws_http_v3_handshakes_load(qa, &d->peer);
    if (hd.token.len && hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
        if (ngtcp2_crypto_verify_retry_token(&odcid, hd.token.base, hd.token.len, qa->key,
                                             SWS_H3_KEY_LEN, hd.version,
                                             (const ngtcp2_sockaddr *) &d->peer, d->peerlen,
                                             &hd.dcid, 10 * NGTCP2_SECONDS, now) != 0)
        {
            return NULL;                /* forged, or too old: dropped */
        }
        retried = 1;
    } else if (conf->retry || load != SWS_H3_ROOM) {
        sws_http_v3_send_retry(us, d, &hd);
        return NULL;
    }
    if (load == SWS_H3_FULL) {
        sws_log_debug(us->log, "QUIC handshakes: no room for a new one");
        return NULL;
    }

    pool = sws_pool_create(4096, us->log);
    if (pool == NULL) {
        return NULL;
    }
    qc = sws_pcalloc(pool, sizeof(sws_http_v3_conn_t));
    if (qc == NULL) {
        sws_pool_destroy(pool);
        return NULL;
    }
    qc->pool = pool;
    qc->us = us;
    qc->qa = qa;
    qc->number = sws_h3_number++;
    sws_memcpy(&qc->peer, &d->peer, d->peerlen);
    qc->peerlen = d->peerlen;
    sws_memcpy(&qc->local, &d->local, d->locallen);
    qc->locallen = d->locallen;
    qc->timer.data = qc;
    qc->timer.handler = sws_http_v3_timeout;
    qc->post.data = qc;
    qc->post.handler = sws_http_v3_posted;
    sws_queue_init(&qc->streams);
    sws_queue_init(&qc->cids);
    sws_queue_init(&qc->cid_free);
    sws_queue_insert_tail(&sws_h3_conns, &qc->queue);
    qa->nconns++;
    sws_queue_insert_tail(&sws_h3_half_open, &qc->half_open);
    qa->nhandshakes++;

    if (sws_http_v3_session_init(qc) != SWS_OK) {
        goto failed;
    }
    clcf = qc->session.cscf->ctx->loc_conf[sws_http_core_module.index];

    ngtcp2_settings_default(&settings);
    settings.initial_ts = now;
    settings.max_tx_udp_payload_size = SWS_H3_MAX_UDP;
    /* ssl_handshake_timeout, as over TCP */
    settings.handshake_timeout = (ngtcp2_duration) ((sws_http_ssl_srv_conf_t *)
                                     qc->session.cscf->ctx->srv_conf[sws_http_ssl_module.index])
                                 ->handshake_timeout * NGTCP2_MILLISECONDS;
    /* Request bodies: the windows start at http3_stream_buffer_size and
     * grow with the path (ngtcp2's auto-tuning) up to these. */
    settings.max_stream_window = 16 * 1024 * 1024;
    settings.max_window = 32 * 1024 * 1024;

    ngtcp2_transport_params_default(&params);
    params.initial_max_stream_data_bidi_remote = conf->stream_buffer_size;
    params.initial_max_stream_data_uni = 64 * 1024;
    params.initial_max_data = (uint64_t) conf->stream_buffer_size
                              * sws_min(conf->max_concurrent_streams, 16);
    params.initial_max_streams_bidi = conf->max_concurrent_streams;
    /* The client's control and QPACK streams (RFC 9114 6.2); a fourth
     * is refused by QUIC itself (STREAM_LIMIT_ERROR). */
    params.initial_max_streams_uni = 3;
    params.max_idle_timeout = (clcf->keepalive_timeout ? clcf->keepalive_timeout : 60000)
                              * NGTCP2_MILLISECONDS;
    params.active_connection_id_limit = 4;
    params.stateless_reset_token_present = 1;
    if (retried) {
        params.original_dcid = odcid;
        params.retry_scid = hd.dcid;
        params.retry_scid_present = 1;
    } else {
        params.original_dcid = hd.dcid;
    }
    sws_http_v3_cid_make(&scid);
    if (ngtcp2_crypto_generate_stateless_reset_token(params.stateless_reset_token, qa->key,
                                                     SWS_H3_KEY_LEN, &scid) != 0)
    {
        goto failed;
    }

    path.local.addr = (ngtcp2_sockaddr *) &qc->local;
    path.local.addrlen = qc->locallen;
    path.remote.addr = (ngtcp2_sockaddr *) &qc->peer;
    path.remote.addrlen = qc->peerlen;
    path.user_data = NULL;
    if (ngtcp2_conn_server_new(&qc->conn, &hd.scid, &scid, &path, hd.version,
                               &sws_http_v3_callbacks, &settings, &params, NULL, qc) != 0)
    {
        qc->conn = NULL;
        goto failed;
    }
    if (sws_http_v3_tls_session(qc) != SWS_OK
        || sws_http_v3_cid_add(qc, &scid) != SWS_OK
        || sws_http_v3_cid_add(qc, &hd.dcid) != SWS_OK)
    {
        goto failed;
    }
    return qc;

failed:
    sws_log_error(SWS_LOG_ALERT, us->log, 0, "a QUIC connection could not be set up");
    sws_http_v3_close(qc);
    return NULL;
}

static void
sws_http_v3_datagram(sws_udp_socket_t *us, sws_udp_dgram_t *d)
{
    ngtcp2_version_cid  vc;
    sws_http_v3_conn_t *qc;
    ngtcp2_path         path;
    ngtcp2_pkt_info     pi;
    int                 rv;

    if (d->len == 0) {
        return;                         /* (ngtcp2 asserts there is a byte) */
    }
    rv = ngtcp2_pkt_decode_version_cid(&vc, d->data, d->len, SWS_H3_CID_LEN);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
        sws_http_v3_version_negotiation(us, d, &vc);
        return;
    }
    if (rv != 0) {
        return;                         /* not QUIC: dropped */
    }
    qc = sws_http_v3_find(vc.dcid, vc.dcidlen);
    if (qc == NULL) {
        if (vc.version == 0) {
            sws_http_v3_stateless_reset(us, d, &vc);
            return;
        }
        if (((sws_http_v3_addr_t *) us->data)->stopping) {
            return;                     /* the worker stops: no new ones */
        }
        qc = sws_http_v3_accept(us, d);
        if (qc == NULL) {
            return;
        }
    }
    if (qc->closing) {
        return;
    }

    path.local.addr = (ngtcp2_sockaddr *) &d->local;
    path.local.addrlen = d->locallen;
    path.remote.addr = (ngtcp2_sockaddr *) &d->peer;
    path.remote.addrlen = d->peerlen;
    path.user_data = NULL;
    pi.ecn = d->ecn;
    qc->in_read = 1;
    rv = ngtcp2_conn_read_pkt(qc->conn, &path, &pi, d->data, d->len, sws_http_v3_now());
    qc->in_read = 0;
    if (rv == 0) {
        sws_http_v3_post_write(qc);
        return;
    }
    switch (rv) {
    case NGTCP2_ERR_DRAINING:           /* the client closed */
    case NGTCP2_ERR_DROP_CONN:
    case NGTCP2_ERR_RETRY:
        sws_http_v3_close(qc);
        return;
    }
    sws_log_debug(qc->session.log, "QUIC packet refused: %s", ngtcp2_strerror(rv));
    sws_http_v3_close_with(qc, rv);
}

void
sws_http_v3_read_handler(sws_udp_socket_t *us, sws_udp_dgram_t *d, sws_uint_t n)
{
    sws_uint_t i;

    sws_http_v3_tables_init();
    for (i = 0; i < n; i++) {
        sws_http_v3_datagram(us, &d[i]);
    }
}

void
sws_http_v3_close_all(sws_udp_socket_t *us)
{
    sws_queue_t        *q, *next;
    sws_http_v3_conn_t *qc;

    if (!sws_h3_ready) {
        return;
    }
    for (q = sws_queue_head(&sws_h3_conns); q != sws_queue_sentinel(&sws_h3_conns); q = next) {
        next = sws_queue_next(q);
        qc = sws_queue_data(q, sws_http_v3_conn_t, queue);
        if (qc->us == us) {
            if (!qc->app_error_set) {
                qc->app_error = NGHTTP3_H3_NO_ERROR;
                qc->app_error_set = 1;
            }
            sws_http_v3_close_with(qc, 0);
        }
    }
}

/*
 * The worker stops (QUIT, a reload, the adaptive runtime retiring it). Its
 * connections' datagrams still come to it (their IDs name its slot, see
 * sws_udp_steer.h), new connections go to other workers (an Initial that
 * comes here all the same is dropped). As HTTP/2 does: each connection
 * gets a GOAWAY notice (RFC 9114 5.2: the largest stream ID), which
 * refuses none of the requests already on their way, and
 * worker_shutdown_idle later the final GOAWAY with the last request
 * stream received; it ends (CONNECTION_CLOSE, H3_NO_ERROR) when those are
 * done, an idle one then at once. One still in its handshake gets the
 * notice when it is done (and ends with the others if it is not by then).
 * The socket closes with the last connection (or the worker's shutdown
 * timeout ends it all).
 */
void
sws_http_v3_udp_shutdown(sws_connection_t *c)
{
    sws_udp_socket_t   *us = c->data;
    sws_http_v3_addr_t *qa = us->data;
    sws_queue_t        *q, *next;
    sws_http_v3_conn_t *qc;

    c->shutdown = NULL;
    qa->stopping = c;
    if (qa->nconns == 0) {
        sws_http_v3_socket_close(qa);
        return;
    }
    for (q = sws_queue_head(&sws_h3_conns); q != sws_queue_sentinel(&sws_h3_conns); q = next) {
        next = sws_queue_next(q);
        qc = sws_queue_data(q, sws_http_v3_conn_t, queue);
        if (qc->us != us || qc->closing) {
            continue;
        }
        qc->draining = 1;
        if (qc->h3 == NULL) {
            continue;                   /* the notice once its handshake is done */
        }
        if (nghttp3_conn_submit_shutdown_notice(qc->h3) != 0) {
            sws_http_v3_conn_error(qc, NGHTTP3_H3_NO_ERROR, "worker stops");
            continue;
        }
        sws_http_v3_post_write(qc);
    }
    if (qa->stopping != NULL) {         /* (closed with the last connection) */
        qa->goaway.data = us;
        qa->goaway.handler = sws_http_v3_goaway;
        sws_add_timer(&qa->goaway, sws_exiting_idle ? sws_exiting_idle : 1);
    }
}

/* worker_shutdown_idle after the notice: every request the client sent
 * before it read the notice has come. */
static void
sws_http_v3_goaway(sws_event_t *ev)
{
    sws_udp_socket_t   *us = ev->data;
    sws_queue_t        *q, *next;
    sws_http_v3_conn_t *qc;

    for (q = sws_queue_head(&sws_h3_conns); q != sws_queue_sentinel(&sws_h3_conns); q = next) {
        next = sws_queue_next(q);
        qc = sws_queue_data(q, sws_http_v3_conn_t, queue);
        if (qc->us != us || !qc->draining || qc->goaway || qc->closing) {
            continue;
        }
        qc->goaway = 1;
        if (qc->h3 == NULL || qc->nstreams == 0 || nghttp3_conn_shutdown(qc->h3) != 0) {
            sws_http_v3_conn_error(qc, NGHTTP3_H3_NO_ERROR, "worker stops");
            continue;
        }
        sws_http_v3_post_write(qc);
    }
}

void
sws_http_v3_drained(sws_http_v3_conn_t *qc)
{
    if (qc->goaway && qc->nstreams == 0 && !qc->closing) {
        sws_http_v3_conn_error(qc, NGHTTP3_H3_NO_ERROR, "worker stops");
    }
}

static void
sws_http_v3_socket_close(sws_http_v3_addr_t *qa)
{
    sws_connection_t *c = qa->stopping;
    sws_udp_socket_t *us = c->data;

    qa->stopping = NULL;
    if (qa->goaway.timer_set) {
        sws_del_timer(&qa->goaway);
    }
    if (us->listening) {
        us->listening->connection = NULL;
    }
    sws_event_del_connection(c);
    sws_close_connection(c);
}
