      # h2o keeps upstream connections alive by default (proxy.timeout.keepalive:
      # 2 s of idleness) and sends X-Forwarded-For and X-Forwarded-Proto by
      # default (proxy.emit-x-forwarded-headers); Via is off (proxy.http.frag)
      "/api/":
        proxy.reverse.url: http://127.0.0.1:@ORIGIN_PORT@/api/
