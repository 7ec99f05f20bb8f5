    # bench/soak --mix: the proxy scenario's origin, and a cache in front of it
    upstream origin {
        server 127.0.0.1:@ORIGIN_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
    proxy_cache_path @TMP@/cache keys_zone=bench:10m mem_size=64m mem_max_object=1m;
