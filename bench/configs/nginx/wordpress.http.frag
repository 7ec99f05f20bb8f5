    # the wordpress scenario's pool: as the php scenario's (no kept FastCGI
    # connections: see php.http.frag)
    upstream php {
        server unix:@PHP_SOCK@;
    }
