        # page.html.gz next to page.html; the open file cache as a static
        # site would have it (the same in nginx's fragment)
        location = /page.html {
            default_type text/html;
            gzip_static on;
            open_file_cache max=1000;
        }
