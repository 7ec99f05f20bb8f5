        # the application scenarios (node, python, python-wsgi): the same
        # application behind every server, as an external app on TCP
        location /app/ {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # as nginx's fragment, and as h2o and lighttpd send by default
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }
