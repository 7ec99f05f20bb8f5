    # the php scenario's pool (started by the harness on the client's CPU);
    # keepalive @PHP_KEEPALIVE@ x 1 worker < pm.max_children @PHP_CHILDREN@
    # (docs/fastcgi.md: an idle kept connection pins a child)
    upstream php {
        server unix:@PHP_SOCK@;
        keepalive @PHP_KEEPALIVE@;
    }
