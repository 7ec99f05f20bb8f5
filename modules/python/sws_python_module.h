/*
 * The python module: Python applications (docs/apps.md).
 * sws_python_module.c: the descriptor and its directives;
 * sws_python_app.c: python_app blocks, run under uvicorn or gunicorn as
 * managed applications (<scalws/sws_app.h>).
 */
#ifndef SWS_PYTHON_MODULE_H
#define SWS_PYTHON_MODULE_H

#include <scalws/scalws.h>

extern sws_module_t sws_module;

char *sws_python_app(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#endif
