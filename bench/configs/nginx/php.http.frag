    # the php scenario's pool. No kept FastCGI connections: nginx 1.22 has
    # max_conns but no queue (nginx Plus only), so with keepalive a request
    # that finds no idle connection opens one that waits in PHP-FPM's listen
    # queue while the kept ones keep every child busy (requests over 2 s,
    # measured; bench/README.md); with max_conns it would answer 502.
    # Without keep-alive each child closes after its request and takes the
    # next connection in order.
    upstream php {
        server unix:@PHP_SOCK@;
    }
