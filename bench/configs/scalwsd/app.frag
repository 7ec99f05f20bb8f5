        # the application scenarios (node, python, python-wsgi): the same
        # application behind every server, as an external app on TCP
        location /app/ {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
