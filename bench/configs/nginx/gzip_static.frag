        location = /page.html {
            default_type text/html;
            gzip_static on;
            open_file_cache max=1000;
        }
