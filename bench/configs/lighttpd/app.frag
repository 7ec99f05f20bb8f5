# the application scenarios (node, python, python-wsgi): mod_proxy, one
# upstream connection per request (lighttpd 1.4 has no upstream keep-alive)
server.modules += ( "mod_proxy" )
$HTTP["url"] =~ "^/app/" {
    proxy.server = ( "" => ( ( "host" => "127.0.0.1", "port" => @APP_PORT@ ) ) )
}
