<?php
// What the script sees: the CGI variables, the query, the form, the body.
$keys = ['SCRIPT_FILENAME', 'SCRIPT_NAME', 'PATH_INFO', 'QUERY_STRING', 'REQUEST_METHOD',
         'CONTENT_TYPE', 'CONTENT_LENGTH', 'REQUEST_URI', 'DOCUMENT_URI', 'DOCUMENT_ROOT',
         'SERVER_PROTOCOL', 'REQUEST_SCHEME', 'HTTPS', 'GATEWAY_INTERFACE', 'SERVER_SOFTWARE',
         'REMOTE_ADDR', 'REMOTE_PORT', 'SERVER_ADDR', 'SERVER_PORT', 'SERVER_NAME',
         'REDIRECT_STATUS', 'PHP_SELF'];
$server = [];
foreach ($keys as $k) {
    if (isset($_SERVER[$k])) {
        $server[$k] = $_SERVER[$k];
    }
}
$http = [];
foreach ($_SERVER as $k => $v) {
    if (strncmp($k, 'HTTP_', 5) == 0) {
        $http[$k] = $v;
    }
}
$raw = file_get_contents('php://input');
header('Content-Type: application/json');
echo json_encode(['server' => $server, 'http' => $http, 'get' => $_GET, 'post' => $_POST,
                  'body_len' => strlen($raw), 'body_md5' => md5($raw),
                  'pid' => getmypid()]);
