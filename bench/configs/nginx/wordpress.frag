        # the wordpress scenario: WordPress's nginx configuration as it is
        # (permalinks through try_files, PHP through the documented location;
        # no fastcgi_keep_conn: see php.http.frag)
        location / {
            root @PHP_ROOT@;
            index index.php;
            try_files $uri $uri/ /index.php?$args;
        }
        location ~ \.php$ {
            root @PHP_ROOT@;
            try_files $uri =404;
            fastcgi_pass php;
            include /etc/nginx/fastcgi.conf;
            fastcgi_param WORDPRESS_CONFIG @WP_CONFIG@;
        }
