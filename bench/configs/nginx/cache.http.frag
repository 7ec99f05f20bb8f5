    # the cache-hit scenarios: the proxy scenario's origin behind nginx's cache
    # (each hit is read from its file; the index is in keys_zone)
    upstream origin {
        server 127.0.0.1:@ORIGIN_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
    proxy_cache_path @TMP@/cache keys_zone=bench:10m;
