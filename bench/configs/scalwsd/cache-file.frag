        location /cache-file {
            proxy_pass http://origin;
            proxy_cache benchfile;
        }
