        # HTTP/3: a QUIC listener on the TLS listener's port number (UDP),
        # the same certificate (tls.frag's directives)
        listen 127.0.0.1:@PORT@ quic reuseport;
        http3 on;
        # GSO trains (quic_gso is off by default, as nginx's); h3-nogso.frag
        # is the same without
        quic_gso on;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        ssl_session_cache shared:SSL:10m;
        ssl_protocols TLSv1.3;
