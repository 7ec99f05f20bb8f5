/*
 * Request variables ($remote_addr, $status, $http_user_agent ...) and
 * formats built from them ("text $var text ${var}text"), compiled once at
 * configuration time: each variable is resolved to a getter function and
 * its argument, so rendering a line walks a flat array of operations.
 */
#ifndef SWS_HTTP_VARIABLES_H
#define SWS_HTTP_VARIABLES_H

#include <scalws/scalws.h>

#include <scalws/sws_variables.h>

/* Forget the variables modules declared (a new configuration starts). */
void sws_http_variables_reset(void);

#endif
