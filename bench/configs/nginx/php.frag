        # the php scenario, nginx's documented PHP location (no
        # fastcgi_keep_conn: see php.http.frag)
        location ~ \.php$ {
            root @PHP_ROOT@;
            try_files $uri =404;
            fastcgi_pass php;
            include /etc/nginx/fastcgi.conf;
        }
