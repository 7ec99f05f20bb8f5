        location /api/ {
            proxy_pass http://origin;
            # the defaults (HTTP/1.1, no Connection header), stated like nginx's;
            # X-Forwarded-For and X-Forwarded-Proto are sent by default
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
