    # the php scenario's pool, kept alive as for scalwsd
    upstream php {
        server unix:@PHP_SOCK@;
        keepalive @PHP_KEEPALIVE@;
    }
