        # TLS scenarios: TLS 1.3 only (nginx 1.22 would otherwise answer
        # TLS 1.2: its default excludes 1.3), the harness's ECDSA P-256
        # certificate; sessions in a cache shared by the workers, tickets on
        # (the default)
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        ssl_session_cache shared:SSL:10m;
        ssl_protocols TLSv1.3;
