        location = /page.html {
            default_type text/html;
            brotli on;
            brotli_comp_level 1;
        }
