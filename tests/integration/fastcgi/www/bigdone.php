<?php
// big.php's output, then "done" written to the file named by ?mark= once
// all of it has been handed to the server: the child is free.
require __DIR__ . '/big.php';
flush();
file_put_contents($_GET['mark'], "done");
