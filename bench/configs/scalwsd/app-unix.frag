        # node-unix, python-unix: the application scenarios' app on a unix
        # socket, otherwise as app.frag
        location /app/ {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # as nginx's fragment (proxy_pass sends neither by default)
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }
