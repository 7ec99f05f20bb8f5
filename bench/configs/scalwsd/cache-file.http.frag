    # the cache-hit-file scenario: the proxy scenario's origin behind a cache
    # with no memory copies (mem_size=0), so that every hit is sent from the
    # entry's file, as nginx sends its hits (the file kept open: open_files)
    upstream origin {
        server 127.0.0.1:@ORIGIN_PORT@;
        keepalive @UPSTREAM_KEEPALIVE@;
    }
    proxy_cache_path @TMP@/cachefile keys_zone=benchfile:10m mem_size=0;
