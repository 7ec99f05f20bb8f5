<?php
// n bytes of a known pattern (line i is "%07d" and 56 'x' and "\n", 64 bytes),
// flushed as it goes: the output streams through FastCGI records.
$n = isset($_GET['n']) ? intval($_GET['n']) : 3 * 1024 * 1024;
header('Content-Type: text/plain');
$sent = 0;
for ($i = 0; $sent < $n; $i++) {
    $line = sprintf("%07d", $i) . str_repeat('x', 56) . "\n";
    $line = substr($line, 0, $n - $sent);
    echo $line;
    $sent += strlen($line);
    if ($i % 1024 == 0) {
        flush();
    }
}
