<?php
// As big.php, then writes "done" to the file named by ?mark= once the whole
// output has been handed to the server: the child is free.
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
flush();
file_put_contents($_GET['mark'], "done");
