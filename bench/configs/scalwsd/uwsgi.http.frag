    # uWSGI (started by the harness on CPU 1) closes every connection after
    # its response: nothing to keep
    upstream uwsgi {
        server unix:@UWSGI_SOCK@;
    }
