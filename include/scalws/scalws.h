/* The ScalWS module SDK: the only header a module needs. */
#ifndef SCALWS_H
#define SCALWS_H

#include <scalws/sws_types.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_buf.h>
#include <scalws/sws_string.h>
#include <scalws/sws_array.h>
#include <scalws/sws_queue.h>
#include <scalws/sws_rbtree.h>
#include <scalws/sws_hash.h>
#include <scalws/sws_hostnames.h>
#include <scalws/sws_time.h>
#include <scalws/sws_log.h>
#include <scalws/sws_conf.h>
#include <scalws/sws_module.h>
#include <scalws/sws_shm.h>
#include <scalws/sws_slab.h>
#include <scalws/sws_keyed_zone.h>
#include <scalws/sws_resolver.h>
#include <scalws/sws_helper.h>
#include <scalws/sws_app.h>
#include <scalws/sws_http.h>
#include <scalws/sws_variables.h>
#include <scalws/sws_http1.h>
#include <scalws/sws_upstream.h>
#include <scalws/sws_upstream_cgi.h>
#include <scalws/sws_regex.h>
#include <scalws/sws_cidr.h>
#include <scalws/sws_status.h>
#include <scalws/sws_server.h>

#define SCALWS_VERSION "0.1.0"

#endif
