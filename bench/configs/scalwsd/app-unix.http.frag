    # the application on a unix socket (started by the harness on CPU 1),
    # kept alive
    upstream app {
        server unix:@APP_SOCK@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
