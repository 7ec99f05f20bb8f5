/*
 * The native Python bridge's framing (docs/python-bridge.md): what scalwsd
 * and the runner (modules/python/bridge, a CPython extension) exchange on
 * a unix socket. Plain C with no dependency on the core or on CPython, so
 * that both sides and their fuzz targets compile the same file.
 *
 * Every frame is an 8-byte header and a payload:
 *
 *     byte 0     type
 *     byte 1     flags (per type; unknown bits are zero)
 *     bytes 2-3  zero
 *     bytes 4-7  payload length, 32 bits big endian
 *
 * scalwsd to the runner: REQUEST (the parsed request head), then, when its
 * BODY flag is set, BODY frames and one BODY_END. The runner to scalwsd:
 * RESPONSE (status and fields), DATA frames, END. Integers are big endian.
 *
 * A body that is a file: when REQUEST has the FILE flag (scalwsd reads
 * the connection with recvmsg() and takes descriptors; a unix socket), the
 * runner may answer RESPONSE, one FILE frame and END, with no DATA. FILE's
 * payload is the range (u64 offset, u64 length) of a regular file whose
 * descriptor comes with the frame's bytes (SCM_RIGHTS, one descriptor):
 * scalwsd sends it from the file itself (sendfile) and closes it.
 */
#ifndef SWS_PYTHON_BRIDGE_FRAME_H
#define SWS_PYTHON_BRIDGE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define SWS_PYB_HEAD_LEN        8

/* to the runner */
#define SWS_PYB_REQUEST         0x01
#define SWS_PYB_BODY            0x02
#define SWS_PYB_BODY_END        0x03
/* to scalwsd */
#define SWS_PYB_RESPONSE        0x11
#define SWS_PYB_DATA            0x12
#define SWS_PYB_END             0x13
#define SWS_PYB_FILE            0x14    /* the body from a passed file */

/* REQUEST flags */
#define SWS_PYB_REQUEST_BODY    0x01    /* BODY frames and BODY_END follow */
#define SWS_PYB_REQUEST_UPGRADE 0x02    /* an Upgrade the location allows: after a
                                           RESPONSE of 101 the connection is the
                                           client's byte stream both ways */
#define SWS_PYB_REQUEST_FILE    0x04    /* the response may be a FILE */
/* END flags */
#define SWS_PYB_END_KEEP        0x01    /* the runner takes another request here */

/* Limits (a frame over its limit is invalid). */
#define SWS_PYB_MAX_HEAD        (1024 * 1024)   /* REQUEST, RESPONSE payloads */
#define SWS_PYB_MAX_STRING      65535           /* a string or field of them */
#define SWS_PYB_MAX_FIELDS      65535

/* FILE's payload: offset and length. */
#define SWS_PYB_FILE_LEN        16

/* The fixed part of REQUEST's payload, before its strings. */
#define SWS_PYB_REQUEST_FIXED   20
/* ... of RESPONSE's: status, field count. */
#define SWS_PYB_RESPONSE_FIXED  4

/* Return codes of the readers. */
#define SWS_PYB_AGAIN     0     /* everything consumed: more bytes needed */
#define SWS_PYB_FRAME     1     /* a frame's header came (see the reader) */
#define SWS_PYB_PIECE     2     /* a piece of the current frame's payload */
#define SWS_PYB_INVALID  -1     /* not a frame this side accepts */

/* Which side reads: what it accepts. */
#define SWS_PYB_TO_RUNNER 0
#define SWS_PYB_TO_SERVER 1

/*
 * A stream of frames read piece by piece, as bytes arrive: a header cut
 * between two reads is kept here (nothing points into the caller's bytes
 * after a call returns). After SWS_PYB_FRAME, type, flags and len are the
 * frame's; its payload then comes as SWS_PYB_PIECE pieces (rest: how much
 * of it is still to come after the piece). A zero-length frame has none.
 */
typedef struct {
    unsigned char  head[SWS_PYB_HEAD_LEN];
    unsigned       have;          /* bytes of head collected */
    unsigned       type;
    unsigned       flags;
    uint32_t       len;
    uint32_t       rest;          /* payload bytes still to come */
    unsigned       side;
} sws_pyb_reader_t;

void sws_pyb_reader_init(sws_pyb_reader_t *rd, unsigned side);
/* From *pos (advanced) to last; *piece and *n: the payload piece. */
int  sws_pyb_read(sws_pyb_reader_t *rd, const unsigned char **pos, const unsigned char *last,
    const unsigned char **piece, size_t *n);

/* A frame header at p; returns p + SWS_PYB_HEAD_LEN. */
unsigned char *sws_pyb_put_head(unsigned char *p, unsigned type, unsigned flags, uint32_t len);
unsigned char *sws_pyb_put16(unsigned char *p, unsigned v);
unsigned char *sws_pyb_put32(unsigned char *p, uint32_t v);
unsigned char *sws_pyb_put64(unsigned char *p, uint64_t v);
/* A string: 16-bit length, bytes. */
unsigned char *sws_pyb_put_str(unsigned char *p, const void *s, size_t len);

/* ---- REQUEST ---------------------------------------------------------
 *
 *   u8  HTTP major version, u8 minor (1 1; 2 0 ...)
 *   u8  flags: 0x01 https
 *   u8  zero
 *   u16 client port, u16 server port (0 for unix sockets)
 *   u64 Content-Length of the body (all ones: none or not known)
 *   u16 field count
 *   u16 zero
 *   then strings (u16 length, bytes): method, path (decoded), raw target
 *   as received, query (no '?'), client address, server address, host;
 *   then each field: name (lower case), value.
 */
#define SWS_PYB_STRINGS  7
#define SWS_PYB_HTTPS    0x01

typedef struct {
    const unsigned char *data;
    size_t               len;
} sws_pyb_str_t;

typedef struct {
    unsigned        major, minor, flags;
    unsigned        client_port, server_port;
    uint64_t        content_length;
    unsigned        nfields;
    sws_pyb_str_t   method, path, raw, query, client, server, host;
    const unsigned char *fields;     /* the first field */
    const unsigned char *end;
} sws_pyb_request_t;

/* Checks the whole payload (every length inside it, nothing after the
 * last field). 0, or -1 for an invalid payload. */
int  sws_pyb_request_decode(const unsigned char *p, size_t len, sws_pyb_request_t *rq);

/* ---- RESPONSE --------------------------------------------------------
 *
 *   u16 status (100..999), u16 field count, then each field: name, value
 *   (u16 length, bytes each).
 */
typedef struct {
    unsigned        status;
    unsigned        nfields;
    const unsigned char *fields;
    const unsigned char *end;
} sws_pyb_response_t;

int  sws_pyb_response_decode(const unsigned char *p, size_t len, sws_pyb_response_t *rs);

/* ---- FILE -------------------------------------------------------------
 *
 *   u64 offset, u64 length: both below 2^63, their sum too.
 */
int  sws_pyb_file_decode(const unsigned char *p, size_t len, uint64_t *offset,
    uint64_t *length);

/* The fields of a decoded REQUEST or RESPONSE, in order: *cur starts at
 * ->fields; 1 with name and value, 0 after the last. */
int  sws_pyb_field_next(const unsigned char **cur, const unsigned char *end,
    sws_pyb_str_t *name, sws_pyb_str_t *value);

#endif
