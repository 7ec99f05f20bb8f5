        # gzip at level 1 (nginx's default), gzip_buffers 32 4k (its default)
        location = /page.html {
            default_type text/html;
            gzip on;
            gzip_comp_level 1;
        }
