        # python-wsgi-uwsgi: the WSGI app under uWSGI (one process), uwsgi protocol
        location /app/ {
            uwsgi_pass uwsgi;
            include @SCALWS_UWSGI_PARAMS@;
        }
