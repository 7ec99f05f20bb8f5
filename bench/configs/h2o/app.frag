      # the application scenarios (node, python, python-wsgi); kept alive by
      # default, X-Forwarded-For and X-Forwarded-Proto sent (see proxy.frag)
      "/app/":
        proxy.reverse.url: http://127.0.0.1:@APP_PORT@/app/
