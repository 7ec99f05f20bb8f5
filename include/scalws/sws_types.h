/*
 * Basic types, return codes and small macros shared by the core and modules.
 * Part of the module SDK: the layout of every public struct here is fixed and
 * never depends on configure flags (see docs/modules.md, "ABI").
 */
#ifndef SWS_TYPES_H
#define SWS_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>

typedef intptr_t  sws_int_t;
typedef uintptr_t sws_uint_t;
typedef int64_t   sws_msec_t;     /* milliseconds */

/* Return codes used throughout the core and by module hooks/handlers. */
#define SWS_OK        0
#define SWS_ERROR    -1
#define SWS_AGAIN    -2
#define SWS_BUSY     -3
#define SWS_DONE     -4
#define SWS_DECLINED -5
#define SWS_ABORT    -6

/* A length-counted string; not necessarily NUL-terminated. */
typedef struct {
    size_t   len;
    u_char  *data;
} sws_str_t;

#define sws_string(s)     { sizeof(s) - 1, (u_char *) (s) }
#define sws_null_string   { 0, NULL }
#define sws_str_set(str, text) \
    do { (str)->len = sizeof(text) - 1; (str)->data = (u_char *) (text); } while (0)

#define sws_min(a, b)  ((a) < (b) ? (a) : (b))
#define sws_max(a, b)  ((a) > (b) ? (a) : (b))
#define sws_nelems(a)  (sizeof(a) / sizeof((a)[0]))
#define sws_align(d, a) (((d) + ((a) - 1)) & ~((a) - 1))

#if defined(__GNUC__)
#define sws_likely(x)   __builtin_expect(!!(x), 1)
#define sws_unlikely(x) __builtin_expect(!!(x), 0)
#define SWS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SWS_EXPORT __attribute__((visibility("default")))
#else
#define sws_likely(x)   (x)
#define sws_unlikely(x) (x)
#define SWS_PRINTF(f, a)
#define SWS_EXPORT
#endif

#define SWS_UNSET       -1
#define SWS_UNSET_UINT  (sws_uint_t) -1
#define SWS_UNSET_SIZE  (size_t) -1
#define SWS_UNSET_MSEC  (sws_msec_t) -1

/* Opaque handles: modules only ever hold pointers to these. */
typedef struct sws_pool_s        sws_pool_t;
typedef struct sws_log_s         sws_log_t;
typedef struct sws_cycle_s       sws_cycle_t;
typedef struct sws_conf_s        sws_conf_t;
typedef struct sws_connection_s  sws_connection_t;
typedef struct sws_event_s       sws_event_t;
typedef struct sws_module_s      sws_module_t;
typedef struct sws_command_s     sws_command_t;
typedef struct sws_http_request_s sws_http_request_t;

#endif
