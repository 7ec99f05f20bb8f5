        # the php scenario: every .php through the documented location
        # (try_files, fastcgi.conf), kept connections to the pool
        location ~ \.php$ {
            root @PHP_ROOT@;
            try_files $uri =404;
            fastcgi_pass php;
            fastcgi_keep_conn on;
            include @SCALWS_FASTCGI_CONF@;
        }
