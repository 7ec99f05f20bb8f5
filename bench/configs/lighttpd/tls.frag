# TLS scenarios: TLS 1.3 only, the harness's ECDSA P-256 certificate.
# lighttpd 1.4.69 speaks HTTP/2 by default and keeps session tickets on (its
# own rotated keys).
server.modules += ( "mod_openssl" )
ssl.engine = "enable"
ssl.pemfile = "@CERT@"
ssl.privkey = "@KEY@"
ssl.openssl.ssl-conf-cmd = ( "MinProtocol" => "TLSv1.3" )
