        # the application scenarios (node, python, python-wsgi)
        location /app/ {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # what h2o and lighttpd send by default (scalwsd's fragment sets them too)
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }
