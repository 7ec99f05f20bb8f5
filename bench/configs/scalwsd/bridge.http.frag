    # the bridge's runner (started by the harness on CPU 1), kept alive
    upstream bridge {
        server unix:@BRIDGE_SOCK@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
