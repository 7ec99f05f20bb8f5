# the wordpress scenario: the php scenario's mod_fastcgi set-up with
# WordPress's directory as the document root (in a condition: the base sets
# the global one), index.php as the index (the home page), WORDPRESS_CONFIG
# passed by mod_setenv (Debian's wp-config.php picks the run's
# configuration by it). Only the home page is asked for, so WordPress's
# permalinks (mod_rewrite's url.rewrite-if-not-file) are not set up.
server.modules += ( "mod_fastcgi", "mod_setenv" )
static-file.exclude-extensions = ( ".php" )
index-file.names = ( "index.php" )
setenv.add-environment = ( "WORDPRESS_CONFIG" => "@WP_CONFIG@" )
fastcgi.server = ( ".php" => ( ( "socket" => "@PHP_SOCK@", "check-local" => "enable" ) ) )
$HTTP["url"] =~ "^/" {
    server.document-root = "@PHP_ROOT@"
}
