# mod_proxy to the origin; it sends X-Forwarded-For and X-Forwarded-Proto by
# default. lighttpd 1.4 opens one upstream connection per request (it sends
# Connection: close and has no upstream keep-alive).
server.modules += ( "mod_proxy" )
$HTTP["url"] =~ "^/api/" {
    proxy.server = ( "" => ( ( "host" => "127.0.0.1", "port" => @ORIGIN_PORT@ ) ) )
}
