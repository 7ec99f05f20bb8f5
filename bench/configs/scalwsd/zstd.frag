        location = /page.html {
            default_type text/html;
            zstd on;
            zstd_comp_level 1;
        }
