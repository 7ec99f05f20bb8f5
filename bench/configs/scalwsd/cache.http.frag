    # the cache-hit scenarios: the proxy scenario's origin (started by the
    # harness on CPU 1) behind a cache whose hot entries stay in shared memory
    upstream origin {
        server 127.0.0.1:@ORIGIN_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
    proxy_cache_path @TMP@/cache keys_zone=bench:10m mem_size=64m mem_max_object=1m;
