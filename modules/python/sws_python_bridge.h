/*
 * The native Python bridge's location configuration, for the python
 * module's other parts (python_pass, which speaks HTTP, to an application
 * run with "server native" is refused: sws_app_expect_protocol). Its first
 * member is a sws_http_cgi_conf_t, whose first is the framework's upstream
 * conf: the python_bridge_* framework directives find it there, so a
 * location conf that holds this one holds it first.
 */
#ifndef SWS_PYTHON_BRIDGE_H
#define SWS_PYTHON_BRIDGE_H

#include <scalws/scalws.h>

typedef struct {
    sws_http_cgi_conf_t   cgi;            /* first: the framework's setter finds it */
    sws_http_format_t    *addrs;          /* "$remote_port $server_port $server_addr":
                                             one evaluation per request */
} sws_pyb_loc_conf_t;

/* The module's create_loc_conf and merge_loc_conf (the location conf is
 * the bridge's), and python_bridge_pass's setter. */
void *sws_python_bridge_create_loc_conf(sws_conf_t *cf);
char *sws_python_bridge_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
char *sws_python_bridge_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

/* From create_loc_conf and merge_loc_conf. */
sws_int_t sws_python_bridge_conf_init(sws_conf_t *cf, sws_pyb_loc_conf_t *lcf);
char *sws_python_bridge_conf_merge(sws_conf_t *cf, sws_pyb_loc_conf_t *prev,
    sws_pyb_loc_conf_t *conf);

/* From a directive's setter: requests of the location being read go to
 * the bridge's runner at addr ("unix:/path", an upstream { } name ...,
 * variables allowed). SWS_CONF_OK or an error message. */
char *sws_python_bridge_set_pass(sws_conf_t *cf, const sws_command_t *cmd,
    sws_pyb_loc_conf_t *lcf, const sws_str_t *addr);

#endif
