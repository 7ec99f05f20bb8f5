    # node-external: hello.js on a unix socket (started by the harness on
    # CPU 1); keepalive as every application scenario's
    upstream app {
        server unix:@APP_SOCK@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
