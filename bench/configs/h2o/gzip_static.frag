      # serves page.html.gz to clients that accept gzip
      "/page.html":
        file.file: @DOCROOT@/page.html
        file.mime.addtypes:
          text/html: .html
        file.send-compressed: ON
