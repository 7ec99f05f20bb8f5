      "/page.html":
        file.file: @DOCROOT@/page.html
        file.mime.addtypes:
          text/html: .html
        compress:
          brotli: 1
