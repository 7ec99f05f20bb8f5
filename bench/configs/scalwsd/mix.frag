        # bench/soak --mix: every protocol and the everyday handlers on one
        # server. The TLS listener (HTTP/1.1 and HTTP/2) is the base
        # template's; QUIC on the same port number; plain HTTP/1.1 on a
        # second port.
        listen 127.0.0.1:@PLAIN_PORT@;
        listen 127.0.0.1:@PORT@ quic reuseport;
        http3 on;
        quic_gso on;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        ssl_session_cache shared:SSL:10m;
        ssl_protocols TLSv1.3;
        location = /respond {
            default_type text/plain;
            return 200 "Hello, world!";
        }
        location /api/ {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /cache {
            proxy_pass http://origin;
            proxy_cache bench;
        }
