        location /cache {
            proxy_pass http://origin;
            proxy_cache bench;
        }
