    # python-external: uvicorn on a unix socket (started by the harness on
    # CPU 1); keepalive as every application scenario's (a cache smaller
    # than wrk's 64 connections reopens connections all the time: the
    # 400 ms p99 of the first runs, bench/README.md)
    upstream app {
        server unix:@APP_SOCK@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
