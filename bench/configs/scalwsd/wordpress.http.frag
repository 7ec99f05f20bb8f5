    # the wordpress scenario's pool: the php scenario's set-up (8 children,
    # max_conns with a queue: see php.http.frag), WordPress as its root
    upstream php {
        server unix:@PHP_SOCK@ max_conns=@PHP_CHILDREN@;
        keepalive @PHP_CHILDREN@;
        queue 1024 timeout=10s;
    }
