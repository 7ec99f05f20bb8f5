# mod_magnet (Debian package lighttpd-modules-lua) answers /respond from a Lua
# script loaded once and run per request; lighttpd has no built-in fixed response.
server.modules += ( "mod_magnet" )
$HTTP["url"] == "/respond" {
    magnet.attract-raw-url-to = ( "@CONFDIR@/respond.lua" )
}
