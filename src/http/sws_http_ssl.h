/* HTTPS: the http ssl module's configuration and the TLS side of HTTP
 * connections (handshake, SNI, ALPN). */
#ifndef SWS_HTTP_SSL_H
#define SWS_HTTP_SSL_H

#include "sws_http_core.h"
#include "sws_ssl.h"

/* A file named by a directive, and where (for the errors loading it). */
typedef struct {
    sws_str_t        name;                /* absolute, NUL-terminated */
    const char      *file;
    sws_uint_t       line;
} sws_http_ssl_file_t;

typedef struct {
    sws_array_t     *certificates;        /* sws_str_t paths */
    sws_array_t     *certificate_keys;
    sws_http_ssl_file_t  password_file;   /* passphrases of encrypted keys */
    sws_uint_t       protocols;           /* SWS_SSL_TLSv1_2 | ... */
    sws_str_t        ciphers;
    sws_int_t        prefer_server_ciphers;
    sws_str_t        ecdh_curve;
    sws_str_t        dhparam;
    sws_int_t        session_cache;       /* SWS_HTTP_SSL_CACHE_* */
    sws_int_t        builtin_size;
    sws_shm_zone_t  *shm_zone;
    time_t           session_timeout;
    sws_int_t        session_tickets;
    sws_str_t        session_ticket_key;
    sws_int_t        stapling;
    sws_int_t        stapling_verify;
    sws_str_t        stapling_file;
    sws_str_t        stapling_responder;
    sws_http_ssl_file_t  trusted_certificate;
    sws_uint_t       verify;              /* SWS_HTTP_SSL_VERIFY_* */
    sws_http_ssl_file_t  client_certificate;
    sws_int_t        verify_depth;
    sws_http_ssl_file_t  crl;
    const char      *verify_file;         /* where ssl_verify_client is */
    sws_uint_t       verify_line;
    sws_int_t        early_data;
    sws_int_t        ktls;
    size_t           buffer_size;
    sws_msec_t       handshake_timeout;
    sws_array_t     *conf_commands;       /* sws_str_t pairs: ssl_conf_command */
    const char      *conf_commands_file;  /* where the first one is */
    sws_uint_t       conf_commands_line;

    sws_ssl_t       *ssl;                 /* the context; NULL: no certificate */
    const char      *file;
    sws_uint_t       line;
} sws_http_ssl_srv_conf_t;

#define SWS_HTTP_SSL_CACHE_OFF      0
#define SWS_HTTP_SSL_CACHE_NONE     1
#define SWS_HTTP_SSL_CACHE_BUILTIN  2
#define SWS_HTTP_SSL_CACHE_SHARED   3

/* ssl_verify_client */
#define SWS_HTTP_SSL_VERIFY_OFF          0
#define SWS_HTTP_SSL_VERIFY_ON           1
#define SWS_HTTP_SSL_VERIFY_OPTIONAL     2
#define SWS_HTTP_SSL_VERIFY_OPTIONAL_NO_CA  3

extern sws_module_t sws_http_ssl_module;

/* sws_http_ssl.c */
/* A new connection on an ssl address: detect plain HTTP, then handshake;
 * afterwards HTTP/1.1 or HTTP/2 (ALPN) takes the connection. */
void      sws_http_ssl_init_connection(sws_connection_t *c);
/* Callbacks set on every context. SNI chooses the server while the
 * ClientHello is read, before versions, ciphers and sessions are looked
 * at: each server's own TLS settings apply, and a session resumes only on
 * the server that made it. */
int       sws_http_ssl_client_hello(SSL *ssl, int *al, void *arg);
int       sws_http_ssl_servername(SSL *ssl, int *ad, void *arg);
int       sws_http_ssl_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg);

/* sws_http_ssl_client.c */
/* Client certificates, once a request's server is known (by Host): SWS_OK,
 * or the status to answer (421 for a name other than the handshake's,
 * SWS_HTTP_SSL_CERT_ERROR, SWS_HTTP_SSL_NO_CERT), logged. */
sws_int_t sws_http_ssl_verify_request(sws_http_request_t *r);

#endif
