<?php
// ?to=/path: a CGI local redirect (Location alone, no status: PHP sends
// none when the code is set to 200 afterwards); ?abs=URL: a client redirect.
if (isset($_GET['to'])) {
    header('Location: ' . $_GET['to']);
    http_response_code(200);
    exit;
}
header('Location: ' . $_GET['abs']);
