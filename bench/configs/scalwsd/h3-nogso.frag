        # h3.frag with the datagrams sent one by one (no UDP GSO)
        listen 127.0.0.1:@PORT@ quic reuseport;
        http3 on;
        quic_gso off;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        ssl_session_cache shared:SSL:10m;
        ssl_protocols TLSv1.3;
