      # the php scenario: hello.php mapped to its file, run by the pool through
      # h2o's FastCGI handler (SCRIPT_FILENAME from the file); idle FastCGI
      # connections kept 10 s (fastcgi.timeout.keepalive; h2o has no cap on
      # their number)
      "/hello.php":
        file.file: @PHP_ROOT@/hello.php
        file.custom-handler:
          extension: .php
          fastcgi.connect:
            port: @PHP_SOCK@
            type: unix
          fastcgi.timeout.keepalive: 10000
