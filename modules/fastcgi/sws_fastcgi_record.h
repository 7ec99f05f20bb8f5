/*
 * FastCGI records (the FastCGI 1.0 specification): their layout, the
 * writers of what we send, and the parser of what a server answers.
 *
 * The parser is incremental and strict: bytes may come in pieces of any
 * size (a record header split over two reads, a record over many), and
 * anything that is not what a responder may send for our request is an
 * error with a reason: a version other than 1, a type other than STDOUT,
 * STDERR or END_REQUEST, another request id, an END_REQUEST whose length
 * is not 8 or whose protocol status is not REQUEST_COMPLETE, a stream
 * that goes on after it was closed, anything after END_REQUEST. It uses
 * nothing of the server (no pool, no log), so the unit test and the fuzz
 * target link it alone.
 */
#ifndef SWS_FASTCGI_RECORD_H
#define SWS_FASTCGI_RECORD_H

#include <scalws/sws_types.h>

#define SWS_FCGI_VERSION            1
#define SWS_FCGI_HEADER_LEN         8
#define SWS_FCGI_MAX_CONTENT        65535

#define SWS_FCGI_BEGIN_REQUEST      1
#define SWS_FCGI_ABORT_REQUEST      2
#define SWS_FCGI_END_REQUEST        3
#define SWS_FCGI_PARAMS             4
#define SWS_FCGI_STDIN              5
#define SWS_FCGI_STDOUT             6
#define SWS_FCGI_STDERR             7

#define SWS_FCGI_RESPONDER          1
#define SWS_FCGI_KEEP_CONN          1

#define SWS_FCGI_REQUEST_COMPLETE   0

/* The one request id we use: a connection carries one request at a time. */
#define SWS_FCGI_REQUEST_ID         1

/* What sws_fcgi_parse returns besides SWS_AGAIN (all input consumed). */
#define SWS_FCGI_DATA               1   /* piece: STDOUT or STDERR bytes */
#define SWS_FCGI_STDOUT_END         2   /* the empty STDOUT record */
#define SWS_FCGI_END                3   /* END_REQUEST: the response is complete */
#define SWS_FCGI_BAD                4   /* p->error says what is wrong */

#define SWS_FCGI_ST_HEADER          0
#define SWS_FCGI_ST_CONTENT         1
#define SWS_FCGI_ST_PADDING         2
#define SWS_FCGI_ST_DONE            3
#define SWS_FCGI_ST_BAD             4

typedef struct {
    u_char        hdr[SWS_FCGI_HEADER_LEN];  /* a header being gathered */
    u_char        end[8];                    /* END_REQUEST's body being gathered */
    uint32_t      hlen;
    uint32_t      elen;
    uint32_t      state;
    uint32_t      type;          /* of the current record */
    uint32_t      content;       /* content bytes left in it */
    uint32_t      padding;       /* padding bytes left */
    uint32_t      app_status;    /* END_REQUEST's */
    unsigned      stdout_closed:1;
    unsigned      stderr_closed:1;
    const char   *error;         /* SWS_FCGI_BAD: why (a static string) */
} sws_fcgi_parser_t;

typedef struct {
    uint32_t       type;         /* SWS_FCGI_STDOUT or SWS_FCGI_STDERR */
    const u_char  *data;         /* into the input */
    size_t         len;          /* > 0 */
} sws_fcgi_piece_t;

void       sws_fcgi_parser_init(sws_fcgi_parser_t *p);
/* Go through [*pos, last) until a piece of stream data, the end of STDOUT,
 * the end of the request, an error, or the end of the input (SWS_AGAIN);
 * *pos is advanced past what was taken. After SWS_FCGI_END, *pos is right
 * after the END_REQUEST record (bytes left after it are an error of the
 * caller's to judge: the connection then cannot be reused). */
sws_int_t  sws_fcgi_parse(sws_fcgi_parser_t *p, u_char **pos, u_char *last,
                          sws_fcgi_piece_t *piece);
/* The input ended (the server closed the connection): NULL if that is
 * fine (after END_REQUEST), else why the response is cut. */
const char *sws_fcgi_parse_eof(const sws_fcgi_parser_t *p);

/* Write a record header at p; returns the end. */
u_char    *sws_fcgi_write_header(u_char *p, sws_uint_t type, size_t content, size_t padding);
/* A BEGIN_REQUEST record (16 bytes) for a responder. */
u_char    *sws_fcgi_write_begin(u_char *p, int keep_conn);
/* The size of a name-value pair, and the pair itself (returns the end). */
size_t     sws_fcgi_pair_len(size_t nlen, size_t vlen);
/* The two lengths of a pair, whose name and value the caller writes. */
u_char    *sws_fcgi_write_lens(u_char *p, size_t nlen, size_t vlen);
u_char    *sws_fcgi_write_pair(u_char *p, const u_char *name, size_t nlen,
                               const u_char *value, size_t vlen);

#endif
