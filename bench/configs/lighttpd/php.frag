# the php scenario: mod_fastcgi (built into Debian's lighttpd) to the pool's
# socket for every .php; check-local (the default) answers 404 for a script
# that is not there, as try_files $uri =404 does. mod_staticfile comes first
# in server.modules (base.conf.in), so it is told to leave .php alone: it
# would otherwise send the source. lighttpd 1.4 opens one FastCGI connection
# per request (no FCGI_KEEP_CONN).
server.modules += ( "mod_fastcgi" )
static-file.exclude-extensions = ( ".php" )
$HTTP["url"] =~ "\.php$" {
    server.document-root = "@PHP_ROOT@"
    fastcgi.server = ( ".php" => ( ( "socket" => "@PHP_SOCK@", "check-local" => "enable" ) ) )
}
