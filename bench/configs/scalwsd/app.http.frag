    # the application (started by the harness on CPU 1), kept alive
    upstream app {
        server 127.0.0.1:@APP_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
