      # the php scenario: hello.php mapped to its file, run by the pool through
      # h2o's FastCGI handler (SCRIPT_FILENAME from the file). No kept FastCGI
      # connections (fastcgi.timeout.keepalive left at its default, 0): h2o
      # 2.2 has no cap on their number, and with them 56 of wrk's 64
      # connections got no answer in a whole window (their FastCGI
      # connections waited in PHP-FPM's listen queue behind the 8 kept ones
      # until h2o's I/O timeout, 30 s; bench/README.md)
      "/hello.php":
        file.file: @PHP_ROOT@/hello.php
        file.custom-handler:
          extension: .php
          fastcgi.connect:
            port: @PHP_SOCK@
            type: unix
