        # gzip at level 1 with nginx's defaults (gzip_buffers 32 4k)
        location = /page.html {
            default_type text/html;
            gzip on;
            gzip_comp_level 1;
        }
