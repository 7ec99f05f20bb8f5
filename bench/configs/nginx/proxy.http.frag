    # the proxy scenario's origin (started by the harness on CPU 1), kept alive:
    # nginx needs keepalive here plus HTTP/1.1 and an empty Connection header in
    # the location. keepalive: --upstream-keepalive (32, as the issue asks);
    # below wrk's 64 connections, connections beyond it are closed after their
    # request (see "upstream connections opened/req" in the report)
    upstream origin {
        server 127.0.0.1:@ORIGIN_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
