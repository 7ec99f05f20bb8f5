<?php
// A status and headers chosen by the query: ?code=418&h=X-One:1
$code = isset($_GET['code']) ? intval($_GET['code']) : 200;
http_response_code($code);
header('X-Script: status');
if (isset($_GET['h'])) {
    header($_GET['h']);
}
header('Set-Cookie: a=1', false);
header('Set-Cookie: b=2', false);
echo "code $code\n";
