    # the php scenario's pool (started by the harness on the client's CPU).
    # A PHP-FPM child serves one connection at a time, so at most as many
    # connections as children (max_conns, in use + idle, x 1 worker), all of
    # them kept; a request that finds them all busy waits here, in order
    # (queue), not in PHP-FPM's listen queue behind kept connections that
    # never free a child (docs/fastcgi.md, "Keep-alive to PHP-FPM")
    upstream php {
        server unix:@PHP_SOCK@ max_conns=@PHP_CHILDREN@;
        keepalive @PHP_CHILDREN@;
        queue 1024 timeout=10s;
    }
