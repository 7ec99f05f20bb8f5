/*
 * The PROXY protocol (HAProxy's, versions 1 and 2): the header an L4 load
 * balancer sends before the client's bytes, naming the client's address
 * and the address it connected to. The parser is incremental: it is fed
 * whatever arrived, down to one byte at a time, keeps its state, and says
 * where the header ended, so that the bytes after it (a TLS ClientHello,
 * an HTTP request) stay for the protocol that follows. It depends on
 * nothing but libc, so a fuzz target and a unit test take it alone.
 */
#ifndef SWS_PROXY_PROTOCOL_H
#define SWS_PROXY_PROTOCOL_H

#include <sys/socket.h>
#include <scalws/sws_types.h>

/* A version 1 line is at most 107 bytes with its CRLF (the spec's bound). */
#define SWS_PROXY_PROTOCOL_V1_MAX   107
/* Version 2: the 16-byte header and at most this many bytes after it
 * (addresses and TLVs). A longer one is refused, as nothing we need is
 * that long (the spec allows 65535). */
#define SWS_PROXY_PROTOCOL_V2_MAX   2048

typedef struct {
    /* the result, once the parser returned SWS_OK */
    sws_uint_t               version;       /* 1 or 2 */
    unsigned                 has_addrs:1;   /* 0: LOCAL, UNKNOWN, UNSPEC, unix */
    struct sockaddr_storage  src;           /* the client */
    struct sockaddr_storage  dst;           /* what it connected to */
    socklen_t                src_len;
    socklen_t                dst_len;

    /* the state (zero it to start) */
    sws_uint_t               state;
    size_t                   total;         /* header bytes taken so far */
    size_t                   len;           /* bytes in buf */
    size_t                   rest;          /* v2: bytes of the block left */
    size_t                   tlv_left;      /* v2: bytes of the TLV value left */
    sws_uint_t               tlv_hdr;       /* v2: bytes of the TLV header seen */
    u_char                   family;        /* v2: address family nibble */
    u_char                   command;       /* v2: 0 LOCAL, 1 PROXY */
    u_char                   buf[SWS_PROXY_PROTOCOL_V1_MAX + 1];
} sws_proxy_protocol_t;

/*
 * Feed n bytes (the next ones of the connection). SWS_AGAIN: all taken,
 * the header is not complete; SWS_OK: complete, *used of these n bytes
 * were the header's (the rest belong to what follows); SWS_ERROR: not a
 * valid PROXY header (or too long): close the connection.
 */
sws_int_t sws_proxy_protocol_parse(sws_proxy_protocol_t *pp, const u_char *p, size_t n,
    size_t *used);

#endif
