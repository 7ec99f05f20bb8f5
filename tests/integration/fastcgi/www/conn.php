<?php
// The FastCGI connection this request came on: the socket inodes the child
// has open besides fd 0 (PHP-FPM's listening socket). A kept connection
// (fastcgi_keep_conn) shows the same inode request after request.
$socks = [];
foreach (scandir('/proc/self/fd') as $fd) {
    if ($fd === '.' || $fd === '..' || intval($fd) <= 2) {
        continue;
    }
    $l = @readlink("/proc/self/fd/$fd");
    if ($l !== false && strncmp($l, 'socket:', 7) == 0) {
        $socks[] = $l;
    }
}
header('Content-Type: application/json');
echo json_encode(['pid' => getmypid(), 'sockets' => $socks]);
