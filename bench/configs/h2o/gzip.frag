      # h2o's compress handler, gzip only, at level 1
      "/page.html":
        file.file: @DOCROOT@/page.html
        file.mime.addtypes:
          text/html: .html
        compress:
          gzip: 1
