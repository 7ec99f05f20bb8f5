    # the proxy scenario's origin (started by the harness on CPU 1); keepalive
    # (--upstream-keepalive, 32 = scalwsd's default) stated like nginx's
    upstream origin {
        server 127.0.0.1:@ORIGIN_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
