/*
 * Looking SDK names up by name (see sws_sdk.h). A module built against a
 * newer SDK minor asks for a function this way instead of linking it, so it
 * still loads (RTLD_NOW) on a server that lacks the function.
 */
#include <string.h>
#include "sws_sdk.h"
#include <scalws/sws_module.h>


const sws_sdk_symbol_t *
sws_sdk_find(const char *name)
{
    int         c;
    sws_uint_t  lo, hi, mid;

    if (name == NULL) {
        return NULL;
    }

    lo = 0;
    hi = sws_sdk_symbols_n;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcmp(name, sws_sdk_symbols[mid].name);

        if (c == 0) {
            return &sws_sdk_symbols[mid];
        }

        if (c < 0) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }

    return NULL;
}


void *
sws_sdk_function(const char *name)
{
    const sws_sdk_symbol_t  *s = sws_sdk_find(name);

    return s ? s->addr : NULL;
}
