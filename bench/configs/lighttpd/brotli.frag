# mod_deflate (Debian package lighttpd-mod-deflate) on the fly, level 1,
# no cache directory (so every request is compressed, as in the others)
server.modules += ( "mod_deflate" )
# text/html for the page only, as the others' location does (the base
# list's "" catch-all comes first and would win over an appended ".html")
$HTTP["url"] == "/page.html" { mimetype.assign = ( ".html" => "text/html" ) }
deflate.mimetypes = ( "text/html" )
deflate.allowed-encodings = ( "br" )
deflate.compression-level = 1
deflate.min-compress-size = 20
