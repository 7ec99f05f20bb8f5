        # the php scenario, nginx's documented PHP location
        location ~ \.php$ {
            root @PHP_ROOT@;
            try_files $uri =404;
            fastcgi_pass php;
            fastcgi_keep_conn on;
            include /etc/nginx/fastcgi.conf;
        }
