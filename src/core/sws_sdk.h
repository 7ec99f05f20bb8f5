/*
 * The SDK's names at run time: a table of every function and object that
 * include/scalws declares, with its address, generated at build time
 * (BUILDDIR/sws_sdk_symbols.c, by auto/sdk_symbols) from the same headers as
 * the version script that makes scalwsd export exactly these names.
 */
#ifndef SWS_SDK_H
#define SWS_SDK_H

#include <scalws/sws_types.h>

typedef struct {
    const char  *name;
    void        *addr;
} sws_sdk_symbol_t;

/* Sorted by name (strcmp order). */
extern const sws_sdk_symbol_t  sws_sdk_symbols[];
extern const sws_uint_t        sws_sdk_symbols_n;

/* The entry of an SDK name, or NULL: what sws_sdk_function() answers, and
 * how the module loader tells an SDK name from any other. */
const sws_sdk_symbol_t *sws_sdk_find(const char *name);

/* After dlopen() of the module at path (src/core/sws_sdk_imports.c): every
 * symbol it takes from outside itself is an SDK name or comes from a library
 * it links, not one that scalwsd happens to link. Logs (emerg) and returns
 * SWS_ERROR otherwise. */
sws_int_t sws_sdk_check_imports(void *handle, const char *path, sws_log_t *log);
/* The message for a module that uses the symbol name from elsewhere. */
void      sws_sdk_log_missing(sws_log_t *log, const char *path, const char *name);

#endif
